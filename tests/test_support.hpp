// Helpers shared by the doctest suites: a scratch folder for files a test
// writes and the message of the Error a call throws. (fp32's γ_n, which the
// tests' bounds use too, is the library's: core/rounding.hpp.)
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/error.hpp"

namespace warpnet::test {

// $WARPNET_TEST_DATA when CTest sets it (one folder per suite, kept for
// inspection), else a temporary folder private to this process and removed at
// exit, so suites run by hand at the same time never share files.
inline const std::filesystem::path& scratch_dir() {
  struct Scratch {
    std::filesystem::path dir;
    bool owned = false;
    Scratch() {
      const char* env = std::getenv("WARPNET_TEST_DATA");
      owned = !(env && *env);
      dir = owned ? std::filesystem::temp_directory_path() / cat("warpnet-test-", ::getpid())
                  : std::filesystem::path(env);
      std::filesystem::create_directories(dir);
    }
    ~Scratch() {
      std::error_code ec;
      if (owned) std::filesystem::remove_all(dir, ec);
    }
  };
  static Scratch scratch;
  return scratch.dir;
}

// The message of the warpnet::Error that fn() throws, or "(no error)".
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace warpnet::test
