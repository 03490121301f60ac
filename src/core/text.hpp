// Text helpers for the tables and lists warpnet prints.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace warpnet {

// Columns a UTF-8 string occupies on a terminal, counting each code point as
// one ("→" and "×" are three bytes but one column; printf's %-20s counts bytes).
inline size_t display_width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;  // skip continuation bytes
  return n;
}

// `s` padded with spaces to `width` columns (left-aligned).
inline std::string pad_right(const std::string& s, size_t width) {
  const size_t w = display_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

// The items with `separator` between them: {"a", "b"} -> "a,b".
inline std::string join(const std::vector<std::string>& items, const char* separator = ",") {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

}  // namespace warpnet
