// Writing files so that a crash never leaves a half-written one behind.
#pragma once
#include <string>
#include <string_view>

namespace warpnet {

// Writes `bytes` to `path` through a temporary file in the same directory
// (path.tmp.<host>.<pid>), flushed and fsync'ed, then renamed over `path`
// (atomic on POSIX), the directory synced after. SIGINT, SIGTERM or SIGHUP
// during the write remove the temporary file, then act as they would have.
// A symbolic link is followed (the file it names is replaced, the link
// kept); a file with no write permission bits, or a path naming a device,
// pipe or socket, is refused, left as it is.
void write_file_atomically(const std::string& path, std::string_view bytes);

// Makes `path`'s directory and its parents where missing; the error names
// `what` (an option: "--report", or "checkpoint") and the path.
void create_parent_directories(const std::string& path, std::string_view what);

// Before a long run that ends by writing `path`: makes its directory and
// checks that a file can be created there, so a path that cannot be written
// fails the run at its start instead of losing its result at the end (a
// read-only file included); and removes this host's temporary files of
// `path` whose writing process no longer runs (killed outright mid-write),
// saying so.
void prepare_output_file(const std::string& path, std::string_view what);

// Fails, naming the path, unless it is a regular file (or a link to one): a
// missing file, a directory, or a FIFO, socket or device, whose reading may
// never end.
void require_regular_file(const std::string& path);

// Reads a whole regular file; the error names the file.
std::string read_file(const std::string& path);

}  // namespace warpnet
