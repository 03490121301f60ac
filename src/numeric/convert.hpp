// Numbers to a format's codes and back, bit by bit (no float tricks): the one
// implementation behind warpnet's host-side fp16/bf16/fp8/fp4, the emulator's
// half/bf16/fp8 types and tensor cores (simt/minifloat.hpp), and tf32.
//
// encode() takes a double, so any float converts exactly and is rounded once.
// Rounding is on the magnitude (sign-magnitude formats):
//   nearest_even  IEEE's default and CUDA's __float2half_rn, __float2bfloat16_rn,
//                 __nv_cvt_float_to_fp8, __nv_cvt_float_to_fp4(cudaRoundNearest)
//   nearest_away  ties away from zero: PTX cvt.rna.tf32.f32, i.e. wmma::__float_to_tf32
//   toward_zero   drop the bits (cudaRoundZero, __float2half_rz; tf32 read
//                 straight from fp32 bits); a finite x past the largest finite
//                 value becomes it (IEEE 754 §7.4), saturating or not
//   stochastic    round away from zero with probability (|x| - lo) / (hi - lo),
//                 lo and hi the neighbours of |x|: unbiased, E[result] = x,
//                 for |x| up to the largest finite value (past it, hi is an
//                 overflow, below). The caller gives a uniformly random 32-bit
//                 word; the probability is the discarded fraction truncated to
//                 32 bits (error < 2^-32).
// Overflow (rounding past the largest finite value, or an infinite input):
//   Saturation::finite   the largest finite, with x's sign (OFP8's saturating
//                        mode, CUDA's __NV_SATFINITE, MX elements)
//   Saturation::none     inf where the format has it (fp16, bf16, e5m2, tf32),
//                        NaN where it has not (e4m3, e8m0; OFP8's non-saturating
//                        mode, CUDA's __NV_NOSAT); e2m1 has neither and always
//                        saturates.
// NaN becomes the canonical NaN (all ones, sign clear), e2m1's +6.
// Below half the smallest subnormal: zero of x's sign (nearest modes).
// e8m0 is unsigned and has no zero: a negative x is NaN, and zero or values
// below 2^-127 become 2^-127. With no mantissa bits every significand is 1,
// so "even" means nothing there: its ties (3 between 2 and 4) round up.
#pragma once
#include <cstdint>

#include "numeric/format.hpp"

namespace warpnet::numeric {

enum class Round : uint8_t { nearest_even, nearest_away, toward_zero, stochastic };

struct Rounding {
  Round mode = Round::nearest_even;
  uint32_t random = 0;  // stochastic only: a uniformly random word, a fresh one per value
};
constexpr Rounding stochastic(uint32_t random) { return {Round::stochastic, random}; }

enum class Saturation : uint8_t { none, finite };

// The code of x in f: sign | exponent field | mantissa field, in the low bits(f) bits.
uint32_t encode(const Format& f, double x, Rounding rounding = {}, Saturation saturation = Saturation::none);
// The value of a code (every value of these formats is a float, exactly).
// Bits above bits(f) must be zero.
float decode(const Format& f, uint32_t code);

// x rounded to f and back.
inline float quantize(const Format& f, double x, Rounding rounding = {}, Saturation saturation = Saturation::none) {
  return decode(f, encode(f, x, rounding, saturation));
}

// tf32: fp32 rounded to 10 mantissa bits, kept as an fp32 with the low 13
// bits zero. Default nearest-even, IEEE's default (cuBLAS and cuDNN do not
// document which rounding their TF32 paths use); Round::nearest_away is CUDA's
// device-side __float_to_tf32 (PTX cvt.rna.tf32.f32, in crt/mma.h), and
// Round::toward_zero keeps the top 19 bits as they are.
inline float round_tf32(float x, Rounding rounding = {}) { return quantize(kTf32, x, rounding); }

}  // namespace warpnet::numeric
