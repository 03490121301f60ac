// Files written whole or not at all: the temporary file a writer killed
// outright leaves behind is removed by the next run that writes that path,
// and a running writer's is not.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/atomic_file.hpp"
#include "tests/test_support.hpp"

using namespace warpnet;

TEST_CASE("preparing an output removes partial writes of processes that no longer run, and only those") {
  const std::filesystem::path dir = test::scratch_dir() / "atomic";
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "run.ckpt").string();
  const std::string dead = out + ".tmp.999999999";  // past Linux's largest pid (2^22): no such process
  const std::string alive = out + ".tmp.1";  // init's: it runs as long as the machine does
  const std::string other = (dir / "other.ckpt.tmp.999999999").string();  // another file's
  for (const std::string& f : {dead, alive, other}) std::ofstream(f) << "partial";
  prepare_output_file(out, "test");
  CHECK_FALSE(std::filesystem::exists(dead));
  CHECK(std::filesystem::exists(alive));
  CHECK(std::filesystem::exists(other));
  write_file_atomically(out, "whole");
  CHECK(read_file(out) == "whole");
  CHECK_FALSE(std::filesystem::exists(out + ".tmp." + std::to_string(::getpid())));  // it became the output
}

TEST_CASE("a write through a symbolic link replaces the file it names and keeps the link") {
  const std::filesystem::path dir = test::scratch_dir() / "atomic_link";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string target = (dir / "real.ckpt").string(), link = (dir / "latest.ckpt").string();
  std::ofstream(target) << "old";
  std::filesystem::create_symlink("real.ckpt", link);
  prepare_output_file(link, "test");
  write_file_atomically(link, "new");
  CHECK(std::filesystem::is_symlink(link));
  CHECK(read_file(target) == "new");
}
