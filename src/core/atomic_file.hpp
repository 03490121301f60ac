// Writing files so that a crash never leaves a half-written one behind.
#pragma once
#include <string>
#include <string_view>

namespace warpnet {

// Writes `bytes` to `path` through a temporary file in the same directory,
// flushed and fsync'ed, then renamed over `path` (atomic on POSIX).
void write_file_atomically(const std::string& path, std::string_view bytes);

// Reads a whole file; the error names the file.
std::string read_file(const std::string& path);

}  // namespace warpnet
