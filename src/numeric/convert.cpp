#include "numeric/convert.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace warpnet::numeric {

uint32_t encode(const Format& f, double x, Rounding rounding, Saturation saturation) {
  if (std::isnan(x)) return canonical_nan(f);
  const bool negative = std::signbit(x);
  if (!f.is_signed && negative && x != 0) return canonical_nan(f);  // e8m0: no negative scales
  const uint32_t sign = negative && f.is_signed ? sign_bit(f) : 0;

  // Past the largest finite value. Rounding toward zero never leaves the
  // finite range (IEEE 754 §7.4; CUDA's __float2half_rz): a finite x too
  // large becomes the largest finite value, whatever the saturation.
  uint32_t overflow = sign | max_code(f);
  const bool saturates = saturation == Saturation::finite || (rounding.mode == Round::toward_zero && !std::isinf(x));
  if (!saturates && f.specials == Specials::ieee) overflow = sign | inf_code(f);
  if (!saturates && f.specials == Specials::fn) overflow = sign | magnitude_mask(f);  // NaN
  if (std::isinf(x)) return overflow;
  if (x == 0) return sign;  // e8m0 (no zero) lands on code 0 too: 2^-127

  // |x| = M * 2^q exactly, M an integer of at most 53 bits.
  const uint64_t bits = std::bit_cast<uint64_t>(std::fabs(x));
  const int field64 = int(bits >> 52);
  uint64_t M = bits & ((uint64_t(1) << 52) - 1);
  int q = -1074;  // double's subnormals
  if (field64 != 0) {
    M |= uint64_t(1) << 52;
    q = field64 - 1075;
  }
  const int e = q + std::bit_width(M) - 1;  // floor(log2 |x|)

  // The result is n * 2^(E - mantissa): E is x's binade, or the smallest
  // normal one when x is below it (then n < 2^mantissa: a subnormal).
  int E = std::max(e, emin(f));
  const int shift = E - f.mantissa - q;  // n = M / 2^shift; >= 0 since M has 53 bits for normal doubles
  WN_CHECK(shift >= 0, "numeric::encode: ", f.name, " has more mantissa bits than a double");
  // n, the discarded fraction as a 0.64 fixed-point number, and whether any
  // bit below that fraction is set.
  uint64_t n = 0, fraction = 0;
  bool sticky = false;
  if (shift == 0) {
    n = M;
  } else if (shift < 64) {
    n = M >> shift;
    fraction = M << (64 - shift);
  } else if (shift < 128) {
    fraction = M >> (shift - 64);
    sticky = (M & ((uint64_t(1) << (shift - 64)) - 1)) != 0;
  } else {
    sticky = true;
  }

  constexpr uint64_t half = uint64_t(1) << 63;
  bool up = false;
  switch (rounding.mode) {
    case Round::nearest_even:
      up = fraction > half || (fraction == half && (sticky || (n & 1)));
      break;
    case Round::nearest_away:
      up = fraction >= half;
      break;
    case Round::toward_zero:
      break;
    case Round::stochastic:
      up = (fraction >> 32) + rounding.random >= (uint64_t(1) << 32);
      break;
  }
  n += up;
  if (n >> (f.mantissa + 1)) {  // rounded up into the next binade
    n >>= 1;
    ++E;
  }

  uint32_t magnitude = 0;
  if (n < (uint64_t(1) << f.mantissa)) {
    // Subnormal or zero; a format without subnormals has no zero either:
    // its smallest value, code 0.
    magnitude = f.subnormals ? uint32_t(n) : 0;
  } else {
    const int field = E + f.bias;
    if (field > (1 << f.exponent) - 1) return overflow;
    magnitude = uint32_t(field) << f.mantissa | (uint32_t(n) & mantissa_mask(f));
  }
  if (magnitude > max_code(f)) return overflow;
  return sign | magnitude;
}

float decode(const Format& f, uint32_t code) {
  WN_CHECK(uint64_t(code) >> bits(f) == 0, "numeric::decode: ", code, " is not a ", bits(f), "-bit ", f.name, " code");
  const bool negative = (code & sign_bit(f)) != 0;
  const uint32_t magnitude = code & magnitude_mask(f);
  double value = 0;
  if (is_nan_code(f, code)) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (has_inf(f) && magnitude == inf_code(f)) {
    value = std::numeric_limits<double>::infinity();
  } else {
    const int field = int(magnitude >> f.mantissa);
    const uint32_t fraction = magnitude & mantissa_mask(f);
    if (field == 0 && f.subnormals)
      value = std::ldexp(double(fraction), emin(f) - f.mantissa);
    else
      value = std::ldexp(double(fraction + (uint32_t(1) << f.mantissa)), field - f.bias - f.mantissa);
  }
  return float(negative ? -value : value);
}

}  // namespace warpnet::numeric
