// Helpers shared by the numeric suites: every code of a format, its finite
// positive values in order, bit casts, and references that do not go through
// numeric/ (integer rounding of fp32 bits, the compiler's _Float16).
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "numeric/convert.hpp"

namespace warpnet::numeric::test {

inline uint32_t f32_bits(float x) { return std::bit_cast<uint32_t>(x); }
inline float f32_from(uint32_t bits) { return std::bit_cast<float>(bits); }
// "0x7e": codes in messages.
inline std::string hex(uint32_t code) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", code);
  return text;
}
inline uint32_t code_count(const Format& f) { return uint32_t(1) << bits(f); }

// The magnitude codes 0..max_code(f) in order and their values: the finite,
// non-negative values of f, increasing.
inline std::vector<double> finite_values(const Format& f) {
  std::vector<double> v;
  for (uint32_t c = 0; c <= max_code(f); ++c) v.push_back(decode(f, c));
  return v;
}

// fp32 rounded to fewer mantissa bits by integer arithmetic on its bits, the
// way bf16 and tf32 are usually cut from an fp32 (finite inputs): keep the top
// 32 - drop bits. Overflow carries into the exponent and gives inf, as it should.
inline uint32_t round_bits_even(uint32_t u, int drop) {
  const uint32_t half = (uint32_t(1) << (drop - 1)) - 1, lsb = (u >> drop) & 1;
  return (u + half + lsb) >> drop << drop;
}
inline uint32_t round_bits_away(uint32_t u, int drop) { return (u + (uint32_t(1) << (drop - 1))) >> drop << drop; }
inline uint32_t round_bits_zero(uint32_t u, int drop) { return u >> drop << drop; }

}  // namespace warpnet::numeric::test
