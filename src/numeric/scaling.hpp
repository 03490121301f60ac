// Scales that let 8- and 4-bit formats hold a tensor whose values would not
// fit their narrow range.
//
// Per-tensor (the FP8 training recipes, e.g. Transformer Engine's): one fp32
// scale for the whole tensor, scale = max_finite(format) / amax, so the
// largest magnitude lands on the format's largest finite value. Encoding
// multiplies by the scale, decoding divides by it.
//
// Microscaling (OCP MX v1.0): blocks of k = 32 consecutive elements along the
// last dimension (section 5.2, Table 1) share one e8m0 scale X, a power of two
// (section 5.4.1). Section 6.3 ("conversion from vectors of scalar floats"):
//   X   = largest power of two <= max_i |V_i|, divided by the largest power of
//         two of the element format: 2^(floor(log2(amax)) - emax_elem),
//         emax_elem = 8 (e4m3), 15 (e5m2), 2 (e2m1);
//   P_i = V_i / X rounded to the element format (ties to even), normal numbers
//         past its max clamped to the max with their sign.
// So the block's largest element lands in the element format's top binade
// and may be clamped (e2m1: amax = 7 in binade [4, 8) becomes 6).
// Where the spec is silent, as the companion paper (Rouhani et al.,
// arXiv:2310.10537, Algorithm 1) and common implementations do: the shared
// exponent is clamped to e8m0's [-127, 127]; an all-zero block gets X = 2^-127;
// a block holding inf or NaN gets X = NaN (0xFF) and decodes to NaN.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "core/rng.hpp"
#include "numeric/convert.hpp"

namespace warpnet::numeric {

// ---- per-tensor -------------------------------------------------------------

struct PerTensor {
  const Format* format = nullptr;
  float scale = 1;             // codes hold x * scale; values are decode(code) / scale
  std::vector<uint8_t> codes;  // one per element (formats of at most 8 bits)
};

// The largest |x| over the finite values (0 if there are none).
float amax(std::span<const float> x);
// max_finite(f) / amax, at most FLT_MAX; 1 when amax is 0 or not finite.
float per_tensor_scale(const Format& f, float amax);
// Saturating: a value the scale pushes past the max (inf, or a later tensor
// under a delayed scale) becomes the max. Stochastic rounding draws one word
// per element from rng (required then, ignored otherwise). Each x·scale is
// rounded once, from its exact value; training's fp8 cast
// (autograd/precision.cpp) rounds the fp32 product first, as a GPU's cast
// kernel does, so about one value in a million (a product within an fp32
// rounding of a tie) lands on the other neighbour.
PerTensor encode_per_tensor(const Format& f, std::span<const float> x, Round mode = Round::nearest_even,
                            Rng* rng = nullptr);
std::vector<float> decode(const PerTensor& t);

// ---- microscaling (MX) ------------------------------------------------------

inline constexpr int kMxBlock = 32;

struct MxTensor {
  const Format* element = nullptr;  // e4m3, e5m2 or e2m1
  int64_t rows = 0, cols = 0;       // the data, (rows, cols) row-major; blocks run along cols
  std::vector<uint8_t> scales;      // (rows, blocks_per_row()) e8m0 codes
  std::vector<uint8_t> codes;       // (rows, cols) element codes, one per byte (not packed)
  int64_t blocks_per_row() const { return (cols + kMxBlock - 1) / kMxBlock; }
};

// floor(log2(amax)) - emax(element), clamped to e8m0's [-127, 127]; -127 for 0.
int mx_shared_exponent(const Format& element, float amax);
// x is (x.size() / cols, cols); a row whose length is not a multiple of 32
// ends in a shorter block, treated as if padded with zeros.
MxTensor encode_mx(const Format& element, std::span<const float> x, int64_t cols, Round mode = Round::nearest_even,
                   Rng* rng = nullptr);
std::vector<float> decode(const MxTensor& t);

}  // namespace warpnet::numeric
