// The error bound of the Winograd F(2x2, 3x3) candidates (conv2d v10 and
// v11, conv2d_dgrad v6 and v7 on their forward view), derived from their fp32
// arithmetic (kernels/conv/winograd.hpp, 10_winograd.cu, winograd_fused.hpp)
// rather than borrowed from the direct sum's: the bound every check of them
// uses (Kernel::tolerance, set by autotuned.hpp for the candidates that are
// Winograd), and the candidate tests' (tests/simt/traced).
//
// Each 2x2 output tile is Y = Aᵀ [Σ_c (G g_c Gᵀ) ⊙ (Bᵀ d_c B)] A, d_c the
// 4x4 window of channel c (zeros in the padding), g_c the 3x3 filter. With
// u = 2^-24, every rounding multiplies what passes through it by (1 + δ),
// |δ| <= u, and n of them compose to (1 + θ), |θ| <= γ_n = n·u / (1 − n·u)
// (Higham, ch. 3; core/rounding.hpp). Expanded, each output is a signed sum
// of products d·g, the transform matrices' entries as weights, and each
// product meets:
//  - Bᵀ d B: an add per side (every row of Bᵀ holds two ±1): 2 roundings;
//  - G g Gᵀ: two adds per side (rows ½(f0 ± f1 + f2); the halving and
//    the ±1 rows exact): 4;
//  - M = Σ_c U ⊙ V, a product and C − 1 adds in any order, FMA or not: C;
//  - Aᵀ M A: two adds per side (every row of Aᵀ holds three ±1): 4.
// So, element by element,
//   |Ŷ − Y| <= γ_{C+10} · |Aᵀ| [Σ_c (|G| |g_c| |G|ᵀ) ⊙ (|Bᵀ| |d_c| |B|)] |A|:
// Σ|d||g| over every product the transforms form (not only the 9C taps the
// direct sum multiplies), each weighted by the matrices' absolute entries.
// Its weights total 64 per channel (4 along each side of |Aᵀ| |G|, times
// 2 x 2 from |Bᵀ|'s rows) against the direct sum's 9 taps, but the chain of
// roundings is C + 10 long instead of 9C: at uniform inputs the bound is
// about 0.4·(1 + 10/C) times the direct versions' bound, 9C·2^-23·Σ|x||w|
// (half of it at C = 32; 3 to 7 times it at C = 1). A wrong transform
// coefficient or a dropped channel moves an output by a whole product,
// orders above it. An absolute 1e-30 covers underflow, as the direct
// bound's does.
#pragma once
#include <array>
#include <span>
#include <vector>

#include "core/tensor.hpp"
#include "device/registry.hpp"

namespace warpnet::device::conv::winograd_bound {

// Sizes are conv2d's {N, C, H, W, K, R, S, stride, pad, dilation}; both
// throw unless R = S = 3, stride 1 and dilation 1 (and pad <= 2 for dgrad),
// where the Winograd candidates apply.

// The bound of each element of y (N, K, P, Q) = x (N, C, H, W) * w (K, C, 3, 3).
std::vector<double> forward(const Sizes& s, std::span<const float> x, std::span<const float> w);

// The bound of each element of dx (N, C, H, W) from dy (N, K, P, Q) and w
// (K, C, 3, 3): the forward's at the view the dgrad candidates run
// (kernels/conv/dgrad_06_winograd.cu's forward_view): dy as x, the filters
// transposed and turned by 180°, padding 2 − pad.
std::vector<double> dgrad(const Sizes& s, std::span<const float> dy, std::span<const float> w);

// One element's bound, as the two give it: y[n,k,p,q], and dx[n,c,h,w]. For
// checks that sample a few outputs of a large problem (the tuners': conv_tune.hpp).
double forward_at(const Sizes& s, std::span<const float> x, std::span<const float> w, const std::array<int, 4>& y);
double dgrad_at(const Sizes& s, std::span<const float> dy, std::span<const float> w, const std::array<int, 4>& dx);

// The two as a Kernel::tolerance, on the op's inputs: one f64 tensor of the
// output's shape.
std::vector<Tensor> forward_tolerance(const Sizes& s, const std::vector<Tensor>& inputs);
std::vector<Tensor> dgrad_tolerance(const Sizes& s, const std::vector<Tensor>& inputs);

}  // namespace warpnet::device::conv::winograd_bound
