// Text helpers for the tables warpnet prints.
#pragma once
#include <cstddef>
#include <string>

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

}  // namespace warpnet
