// The command line every lesson program shares: no argument runs the whole
// chapter, --quick runs smaller sizes (what the chapter's CTest test runs).
#pragma once
#include <cstdio>
#include <cstring>
#include <optional>

namespace warpnet::lesson {

// true for --quick, false for no argument; nullopt, after printing the usage,
// for anything else.
inline std::optional<bool> parse_quick(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") != 0) {
      std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return std::nullopt;
    }
    quick = true;
  }
  return quick;
}

}  // namespace warpnet::lesson
