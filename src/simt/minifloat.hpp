// Rounding a float to a narrower binary floating-point format and back, for
// warpnet's own half/bf16/fp8 types (low_precision.hpp) when the CUDA toolkit
// and its cuda_fp16.h / cuda_bf16.h / cuda_fp8.h are not installed.
#pragma once
#include <cstdint>

namespace warpnet::simt {

// A sign bit, `exponent` bits with bias 2^(exponent-1) - 1, `mantissa` bits.
// ieee: the top exponent means inf/NaN (fp16, bf16, e5m2); otherwise only
// all-ones is NaN and the rest of the top exponent is finite (e4m3: max 448).
struct Minifloat {
  int exponent, mantissa;
  bool ieee;
};
inline constexpr Minifloat kHalf{5, 10, true}, kBfloat16{8, 7, true}, kE4M3{4, 3, false}, kE5M2{5, 2, true};

// Round to nearest, ties to even. Past the largest finite value: the largest
// finite if `saturate` (CUDA's __NV_SATFINITE for fp8), else inf (or NaN
// where the format has no inf). NaN becomes the all-ones pattern, sign clear.
uint32_t encode(Minifloat f, float value, bool saturate);
float decode(Minifloat f, uint32_t bits);

}  // namespace warpnet::simt
