// The fused multiply-adds of half and bfloat16, single and paired (__hfma,
// __hfma2), for kernels compiled by g++: CUDA's headers declare them for the
// device only, with the toolkit or without. Like HFMA2, a·b + c is rounded
// once, to nearest even.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace warpnet::simt {

// a·b + c rounded once to double by "round to odd": when the sum is not
// exact, the last bit of the result is made 1 (the neighbour toward the exact
// value when the nearest one's is 0). A format with at least two bits fewer
// than double then rounds it as it would the exact value (Boldo and
// Melquiond, "Emulation of FMA and correctly rounded sums: proved
// algorithms using rounding to odd", 2008); rounding to nearest twice could
// land on a tie that the exact value was not on, as bfloat16's wide
// exponent range allows. The product of two 11-bit (or 8-bit) significands
// is exact in double; the sum's rounding error is found exactly (TwoSum).
inline double fma_rounded_to_odd(double a, double b, double c) {
  const double product = a * b;
  double sum = product + c;
  if (!std::isfinite(sum)) return sum;
  const double c_part = sum - product;
  const double error = (product - (sum - c_part)) + (c - c_part);
  if (error != 0 && (std::bit_cast<uint64_t>(sum) & 1u) == 0)
    sum = std::nextafter(sum, error > 0 ? std::numeric_limits<double>::infinity()
                                        : -std::numeric_limits<double>::infinity());
  return sum;
}

}  // namespace warpnet::simt

inline __half __hfma(__half a, __half b, __half c) {
  return __half(warpnet::simt::fma_rounded_to_odd(float(a), float(b), float(c)));
}
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  return __nv_bfloat16(warpnet::simt::fma_rounded_to_odd(float(a), float(b), float(c)));
}
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) {
  return __halves2half2(__hfma(__low2half(a), __low2half(b), __low2half(c)),
                        __hfma(__high2half(a), __high2half(b), __high2half(c)));
}
inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
  return __halves2bfloat162(__hfma(__low2bfloat16(a), __low2bfloat16(b), __low2bfloat16(c)),
                            __hfma(__high2bfloat16(a), __high2bfloat16(b), __high2bfloat16(c)));
}
