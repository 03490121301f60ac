#include "simt/minifloat.hpp"

#include <cmath>

namespace warpnet::simt {
namespace {

int bias(Minifloat f) { return (1 << (f.exponent - 1)) - 1; }

double largest(Minifloat f) {
  const int top = (1 << f.exponent) - 1;                      // the all-ones exponent field
  const int e = (f.ieee ? top - 1 : top) - bias(f);           // the largest finite exponent
  const double ulps = f.ieee ? 2.0 : 2.0 - std::ldexp(1.0, -f.mantissa);  // e4m3 loses its all-ones mantissa to NaN
  return std::ldexp(ulps - std::ldexp(1.0, -f.mantissa), e);
}

uint32_t all_ones(Minifloat f) { return (1u << (f.exponent + f.mantissa)) - 1; }

}  // namespace

uint32_t encode(Minifloat f, float value, bool saturate) {
  if (std::isnan(value)) return all_ones(f);
  const uint32_t sign = std::signbit(value) ? 1u << (f.exponent + f.mantissa) : 0;
  const double a = std::fabs(double(value)), max = largest(f);
  const uint32_t overflow =
      saturate ? encode(f, float(max), false) : f.ieee ? uint32_t((1 << f.exponent) - 1) << f.mantissa : all_ones(f);
  if (std::isinf(a)) return sign | overflow;
  // The spacing of representable values around a: 2^(e - mantissa), with e no
  // lower than the smallest normal exponent (below it, subnormals: fixed spacing).
  int e = 0;
  std::frexp(a, &e);
  e = std::max(e - 1, 1 - bias(f));
  const double quantum = std::ldexp(1.0, e - f.mantissa);
  const double rounded = std::nearbyint(a / quantum) * quantum;  // the default rounding mode: ties to even
  if (rounded > max) return sign | overflow;
  if (rounded < std::ldexp(1.0, 1 - bias(f)))  // subnormal (or zero): exponent field 0
    return sign | uint32_t(rounded / std::ldexp(1.0, 1 - bias(f) - f.mantissa));
  std::frexp(rounded, &e);
  const int field = e - 1 + bias(f);
  const auto fraction = uint32_t(rounded / std::ldexp(1.0, e - 1 - f.mantissa)) - (1u << f.mantissa);
  return sign | uint32_t(field) << f.mantissa | fraction;
}

float decode(Minifloat f, uint32_t bits) {
  const bool negative = bits >> (f.exponent + f.mantissa) & 1;
  const int field = int(bits >> f.mantissa) & ((1 << f.exponent) - 1);
  const uint32_t fraction = bits & ((1u << f.mantissa) - 1);
  const int top = (1 << f.exponent) - 1;
  double magnitude;
  if (f.ieee && field == top)
    magnitude = fraction ? NAN : INFINITY;
  else if (!f.ieee && field == top && fraction == (1u << f.mantissa) - 1)
    magnitude = NAN;
  else if (field == 0)
    magnitude = std::ldexp(double(fraction), 1 - bias(f) - f.mantissa);
  else
    magnitude = std::ldexp(double(fraction + (1u << f.mantissa)), field - bias(f) - f.mantissa);
  return float(negative ? -magnitude : magnitude);
}

}  // namespace warpnet::simt
