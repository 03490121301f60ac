// The narrow floating-point formats as the emulator names them: warpnet's own
// half/bf16/fp8 types (low_precision.hpp, when the CUDA toolkit and its
// cuda_fp16.h / cuda_bf16.h / cuda_fp8.h are not installed), the tensor-core
// emulation and the inputs of low-precision kernels (device::make_inputs,
// device_bytes). The formats and the rounding are numeric/'s: one
// implementation, tested code by code in tests/numeric.
#pragma once
#include <cstdint>

#include "numeric/convert.hpp"
#include "numeric/format.hpp"

namespace warpnet::simt {

// A sign bit, `exponent` bits with bias 2^(exponent-1) - 1, `mantissa` bits,
// and what the top exponent holds (numeric::Specials). Kernels name their
// input format by address (Kernel::input_format == &simt::kHalf).
using Minifloat = numeric::Format;
inline constexpr const Minifloat& kHalf = numeric::kFp16;
inline constexpr const Minifloat& kBfloat16 = numeric::kBf16;
inline constexpr const Minifloat& kE4M3 = numeric::kE4M3;
inline constexpr const Minifloat& kE5M2 = numeric::kE5M2;

// CUDA's conversion: round to nearest, ties to even, once (a double is not
// rounded to float first, as CUDA's double constructors do not). Past the
// largest finite value: the largest finite if `saturate` (CUDA's
// __NV_SATFINITE for fp8), else inf (or NaN where the format has no inf).
// NaN becomes the all-ones pattern, sign clear.
uint32_t encode(const Minifloat& f, double value, bool saturate);
using numeric::decode;  // float decode(const Minifloat&, uint32_t bits)

}  // namespace warpnet::simt
