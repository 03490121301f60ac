// Files written whole or not at all: the temporary file a writer killed
// outright leaves behind is removed by the next run that writes that path,
// and a running writer's is not.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
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
  prepare_output_file(out, "test", kJsonFile);
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
  CHECK(test::error_of([&] { prepare_output_file(kept, "train --checkpoint", kJsonFile); }) ==
        "train --checkpoint " + kept + ": the file is read-only (mode 440); it is left as it is");
  CHECK(read_file(kept) == "precious");
}

TEST_CASE("read_file with a magic stops at the first bytes of a file of another kind") {
  const std::filesystem::path dir = test::scratch_dir() / "atomic_magic";
  std::filesystem::create_directories(dir);
  const std::string other = (dir / "image.pgm").string(), mine = (dir / "mine.npy").string();
  write_file_atomically(other, "P5\n28 28\n255\n" + std::string(1 << 20, 'x'));
  CHECK(read_file(other, "\x93NUMPY") == "P5\n28 ");  // the magic's length, not the megabyte after it
  write_file_atomically(mine, "\x93NUMPY" + std::string(1000, 'y'));
  CHECK(read_file(mine, "\x93NUMPY").size() == 1006);
  write_file_atomically(mine, "\x93NU");  // cut short inside the magic: returned whole for the caller to say so
  CHECK(read_file(mine, "\x93NUMPY") == "\x93NU");
}

TEST_CASE("a file replaced keeps its permissions: a private checkpoint stays private") {
  const std::filesystem::path dir = test::scratch_dir() / "atomic_mode";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "private.ckpt").string();
  write_file_atomically(path, "first");
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  write_file_atomically(path, "second");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(read_file(path) == "second");
}

TEST_CASE("an output replaces only a file of its own kind, or an empty one") {
  const std::filesystem::path dir = test::scratch_dir() / "atomic_kind";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string data = (dir / "train-labels-idx1-ubyte.gz").string();
  write_file_atomically(data, std::string("\x1f\x8b\x08", 3));
  CHECK(test::error_of([&] { prepare_output_file(data, "train --report", kJsonFile); }) ==
        "train --report " + data + ": the file exists and is not a JSON document (train --report writes one, which "
        "would replace it); it is left as it is: remove it or name another file");
  CHECK(read_file(data) == std::string("\x1f\x8b\x08", 3));
  const std::string report = (dir / "report.json").string(), empty = (dir / "empty").string();
  write_file_atomically(report, "{\"model\": \"mlp\"}\n");
  write_file_atomically(empty, "");
  prepare_output_file(report, "train --report", kJsonFile);
  prepare_output_file(empty, "train --report", kJsonFile);
  // A file shorter than the kind's magic is not of the kind.
  const std::string short_file = (dir / "short").string();
  write_file_atomically(short_file, "W");
  CHECK(test::error_of([&] { prepare_output_file(short_file, "train --checkpoint", FileKind{"a checkpoint", "WARPNETC"}); })
            .starts_with("train --checkpoint " + short_file + ": the file exists and is not a checkpoint"));
}

TEST_CASE("a write through a symbolic link replaces the file it names and keeps the link") {
  const std::filesystem::path dir = test::scratch_dir() / "atomic_link";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string target = (dir / "real.ckpt").string(), link = (dir / "latest.ckpt").string();
  std::ofstream(target) << "{\"old\": 1}";
  std::filesystem::create_symlink("real.ckpt", link);
  prepare_output_file(link, "test", kJsonFile);
  write_file_atomically(link, "new");
  CHECK(std::filesystem::is_symlink(link));
  CHECK(read_file(target) == "new");
}

TEST_CASE("a write through links to a file not yet there creates that file and keeps the links") {
  const std::filesystem::path dir = test::scratch_dir() / "atomic_dangling";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "runs");
  // latest.ckpt -> runs/current -> run1.ckpt (relative to runs/), which does not exist yet.
  const std::string link = (dir / "latest.ckpt").string(), target = (dir / "runs" / "run1.ckpt").string();
  std::filesystem::create_symlink("runs/current", link);
  std::filesystem::create_symlink("run1.ckpt", dir / "runs" / "current");
  prepare_output_file(link, "test", kJsonFile);
  write_file_atomically(link, "new");
  CHECK(std::filesystem::is_symlink(link));
  CHECK(std::filesystem::is_symlink(dir / "runs" / "current"));
  CHECK(read_file(target) == "new");
  // Links that lead back to themselves: refused, as open(2) refuses them.
  const std::string loop = (dir / "loop").string();
  std::filesystem::create_symlink("loop", loop);
  CHECK(test::error_of([&] { write_file_atomically(loop, "bytes"); }) == loop + ": too many levels of symbolic links");
  CHECK(std::filesystem::is_symlink(loop));
}

TEST_CASE("the file this program's output goes to is refused, not replaced by the write (--report /dev/stdout > log)") {
  const std::filesystem::path dir = test::scratch_dir() / "atomic_stdout";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string log = (dir / "run.log").string();
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO), fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(saved >= 0);
  REQUIRE(fd >= 0);
  ::dup2(fd, STDOUT_FILENO);
  ::close(fd);
  // The log is still empty (the output buffered), so it passes as an empty report would.
  const std::string by_name = test::error_of([&] { prepare_output_file(log, "train --report", kJsonFile); });
  const std::string through_proc = test::error_of([&] { write_file_atomically("/proc/self/fd/1", "{}"); });
  std::fflush(stdout);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  CHECK(by_name == "train --report " + log +
                       ": it is this program's standard output, whose file the write would replace with its own; "
                       "name another file");
  CHECK(through_proc.starts_with("/proc/self/fd/1: it is this program's standard output"));
  CHECK(std::filesystem::exists(log));
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
  CHECK(test::error_of([&] { prepare_output_file(fifo, "op --out", kJsonFile); }) == "op --out " + fifo + why);
  CHECK(test::error_of([&] { write_file_atomically(fifo, "bytes"); }) == fifo + why);
  CHECK(test::error_of([&] { write_file_atomically(link, "bytes"); }) == fifo + why);  // the link followed
  CHECK(std::filesystem::is_fifo(fifo));
}
