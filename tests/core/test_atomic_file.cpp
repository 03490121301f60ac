// Files written whole or not at all: the temporary file a writer killed
// outright leaves behind is removed by the next run that writes that path,
// and a running writer's is not.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/atomic_file.hpp"
#include "tests/test_support.hpp"

using namespace warpnet;

TEST_CASE("preparing an output removes partial writes of processes that no longer run here, and only those") {
  const std::filesystem::path dir = test::scratch_dir() / "atomic";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  char host[256] = "host";
  ::gethostname(host, sizeof host - 1);
  const std::string out = (dir / "run.ckpt").string(), here = out + ".tmp." + host + ".";
  const std::string dead = here + "999999999";  // past Linux's largest pid (2^22): no such process
  const std::string alive = here + "1";         // init's: it runs as long as the machine does
  const std::string elsewhere = out + ".tmp.another-host.999999999";  // a pid of another machine means nothing here
  const std::string other = (dir / "other.ckpt.tmp.").string() + host + ".999999999";  // another file's
  for (const std::string& f : {dead, alive, elsewhere, other}) std::ofstream(f) << "partial";
  prepare_output_file(out, "test");
  CHECK_FALSE(std::filesystem::exists(dead));
  CHECK(std::filesystem::exists(alive));
  CHECK(std::filesystem::exists(elsewhere));
  CHECK(std::filesystem::exists(other));
  write_file_atomically(out, "whole");
  CHECK(read_file(out) == "whole");
}

TEST_CASE("a read-only file is left as it is, by its mode, whoever runs (root's access() would allow the write)") {
  const std::filesystem::path dir = test::scratch_dir() / "atomic_readonly";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string kept = (dir / "kept.ckpt").string();
  std::ofstream(kept) << "precious";
  std::filesystem::permissions(kept, std::filesystem::perms::owner_read | std::filesystem::perms::group_read);
  CHECK(test::error_of([&] { write_file_atomically(kept, "new"); }) ==
        kept + ": the file is read-only (mode 440); it is left as it is");
  CHECK(test::error_of([&] { prepare_output_file(kept, "train --checkpoint"); }) ==
        "train --checkpoint " + kept + ": the file is read-only (mode 440); it is left as it is");
  CHECK(read_file(kept) == "precious");
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

TEST_CASE("a path naming a pipe (or a device, or a socket) is refused, not replaced by a regular file") {
  const std::filesystem::path dir = test::scratch_dir() / "atomic_fifo";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "pipe").string(), link = (dir / "to_pipe").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  std::filesystem::create_symlink("pipe", link);
  const std::string why = ": not a regular file (a device, pipe or socket), and the write would replace it with one; "
                          "name a file";
  CHECK(test::error_of([&] { prepare_output_file(fifo, "op --out"); }) == "op --out " + fifo + why);
  CHECK(test::error_of([&] { write_file_atomically(fifo, "bytes"); }) == fifo + why);
  CHECK(test::error_of([&] { write_file_atomically(link, "bytes"); }) == fifo + why);  // the link followed
  CHECK(std::filesystem::is_fifo(fifo));
}
