// Writing files so that a crash never leaves a half-written one behind.
#pragma once
#include <initializer_list>
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
// The same for a file made of `parts` in order (a header, then the data):
// no copy of them joined, which for a large array doubled its memory.
void write_file_atomically(const std::string& path, std::initializer_list<std::string_view> parts);

// Makes `path`'s directory and its parents where missing; the error names
// `what` (an option: "--report", or "checkpoint") and the path.
void create_parent_directories(const std::string& path, std::string_view what);

// What an output holds, known by the bytes every such file begins with. An
// output replaces only a file of its own kind (or an empty one): a mistyped
// `--report` must not turn the data set or a checkpoint it names into JSON.
struct FileKind {
  std::string_view name;   // for the error: "a JSON document"
  std::string_view magic;  // the first bytes of every file of this kind
};
// The JSON warpnet writes (records, reports, traces): one object.
inline constexpr FileKind kJsonFile{"a JSON document", "{"};

// Before a long run that ends by writing `path`: makes its directory and
// checks that a file can be created there, so a path that cannot be written
// fails the run at its start instead of losing its result at the end (a
// read-only file included); refuses a file already there that is not of
// `kind`; and removes this host's temporary files of `path` whose writing
// process no longer runs (killed outright mid-write), saying so.
void prepare_output_file(const std::string& path, std::string_view what, const FileKind& kind);

// Whether something is at `path`; fails, naming it, when that cannot be
// told (a folder on the way that may not be read): std::filesystem::exists
// throws an exception that names neither the option nor the fix.
bool path_exists(const std::string& path);

// Whether two paths name one file (through links, "..", and files yet to be
// made); false when either cannot be resolved, whose read or write then
// reports why.
bool names_same_file(const std::string& a, const std::string& b);

// Fails, naming the path, unless it is a regular file (or a link to one): a
// missing file, a directory, or a FIFO, socket or device, whose reading may
// never end.
void require_regular_file(const std::string& path);

// Reads a whole regular file; the error names the file. With `magic`, a
// file that does not begin with it (nor with the start of it, when shorter)
// is not read past those first bytes, which are returned for the caller's
// "bad magic" error: an 8 GiB file of another kind is refused at once, not
// read whole first. A file larger than the memory this process may take is
// refused naming its size.
std::string read_file(const std::string& path, std::string_view magic = {});

}  // namespace warpnet
