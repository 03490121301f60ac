// The error bound of the Winograd candidates — F(2x2, 3x3): conv2d v10 and
// v11, conv2d_dgrad v6 and v7 on their forward view; F(4x4, 3x3): conv2d
// v12, conv2d_dgrad v8 on its forward view — derived from their fp32
// arithmetic (kernels/conv/winograd.hpp, winograd_4x4.hpp, 10_winograd.cu,
// winograd_fused.hpp) rather than borrowed from the direct sum's: the bound every check of them
// uses (Kernel::tolerance, set by autotuned.hpp for the candidates that are
// Winograd), and the candidate tests' (tests/simt/traced).
//
// Each m x m output tile is Y = Aᵀ [Σ_c (G g_c Gᵀ) ⊙ (Bᵀ d_c B)] A, d_c the
// (m+2)x(m+2) window of channel c (zeros in the padding), g_c the 3x3
// filter. With u = 2^-24, every rounding multiplies what passes through it
// by (1 + δ), |δ| <= u, and n of them compose to (1 + θ), |θ| <= γ_n = n·u
// / (1 − n·u) (Higham, ch. 3; core/rounding.hpp). Expanded, each output is a
// signed sum of products d·g, the transform matrices' entries as weights
// (the kernels share sums between rows, e.g. d4 − d2 in two of F(4x4)'s
// rows of Bᵀ d, but never add and take back a term, so the weights stay
// the matrices'), and each product meets:
//  - Bᵀ d B: F(2x2) an add per side (every row of Bᵀ holds two ±1): 2
//    roundings; F(4x4) at most two per side (a product by 5 and a
//    subtraction, or two adds around an exact product by 2 or 4): 4;
//  - G g Gᵀ: F(2x2) two adds per side (rows ½(f0 ± f1 + f2); the halving
//    and the ±1 rows exact): 4; F(4x4) two adds, the constant ⅙ (not a
//    float) and the product by it per side: 8;
//  - M = Σ_c U ⊙ V, a product and C − 1 adds in any order, FMA or not: C;
//  - Aᵀ M A: F(2x2) two adds per side (every row of Aᵀ holds three ±1): 4;
//    F(4x4) at most three per side (a row of five terms): 6.
// So, element by element,
//   |Ŷ − Y| <= γ_{C+r} · |Aᵀ| [Σ_c (|G| |g_c| |G|ᵀ) ⊙ (|Bᵀ| |d_c| |B|)] |A|,
// r = 10 for F(2x2), 18 for F(4x4): Σ|d||g| over every product the
// transforms form (not only the 9C taps the direct sum multiplies), each
// weighted by the matrices' absolute entries. F(2x2)'s weights total 64 per
// channel (4 along each side of |Aᵀ| |G|, times 2 x 2 from |Bᵀ|'s rows)
// against the direct sum's 9 taps, but the chain of roundings is C + 10
// long instead of 9C: at uniform inputs the bound is about 0.4·(1 + 10/C)
// times the direct versions' bound, 9C·2^-23·Σ|x||w| (half of it at C =
// 32; 3 to 7 times it at C = 1). F(4x4)'s weights are larger (Aᵀ's reach 8,
// Bᵀ's 5) and its chain longer: summed over a layer of uniform inputs its
// bound is 13 times F(2x2)'s at C = 32, 10 times at C = 128 (N = 2, 28x28
// and 14x14, 2026-12-05). A wrong transform coefficient or a dropped
// channel moves an output by a whole product, orders above either (F(4x4)
// with Aᵀ's 8 made 7.99 errs by 7 times its bound). An absolute 1e-30
// covers underflow, as the direct bound's does.
#pragma once
#include <array>
#include <span>
#include <vector>

#include "core/tensor.hpp"
#include "device/registry.hpp"

namespace warpnet::device::conv {

// Which Winograd arithmetic a candidate runs, if any (AutotunedConv::winograd).
enum class WinogradTile { none, f2x2, f4x4 };

}  // namespace warpnet::device::conv

namespace warpnet::device::conv::winograd_bound {

// Sizes are conv2d's {N, C, H, W, K, R, S, stride, pad, dilation}; all
// throw unless R = S = 3, stride 1 and dilation 1 (and pad <= 2 for dgrad),
// where the Winograd candidates apply. `tile` is the candidate's
// arithmetic: F(2x2, 3x3) or F(4x4, 3x3); none throws.

// The bound of each element of y (N, K, P, Q) = x (N, C, H, W) * w (K, C, 3, 3).
std::vector<double> forward(const Sizes& s, std::span<const float> x, std::span<const float> w, WinogradTile tile);

// The bound of each element of dx (N, C, H, W) from dy (N, K, P, Q) and w
// (K, C, 3, 3): the forward's at the view the dgrad candidates run
// (kernels/conv/dgrad_06_winograd.cu's forward_view): dy as x, the filters
// transposed and turned by 180°, padding 2 − pad.
std::vector<double> dgrad(const Sizes& s, std::span<const float> dy, std::span<const float> w, WinogradTile tile);

// One element's bound, as the two give it: y[n,k,p,q], and dx[n,c,h,w]. For
// checks that sample a few outputs of a large problem (the tuners': conv_tune.hpp).
double forward_at(const Sizes& s, std::span<const float> x, std::span<const float> w, const std::array<int, 4>& y,
                  WinogradTile tile);
double dgrad_at(const Sizes& s, std::span<const float> dy, std::span<const float> w, const std::array<int, 4>& dx,
                WinogradTile tile);

// The two as a Kernel::tolerance, on the op's inputs: one f64 tensor of the
// output's shape.
std::vector<Tensor> forward_tolerance(const Sizes& s, const std::vector<Tensor>& inputs, WinogradTile tile);
std::vector<Tensor> dgrad_tolerance(const Sizes& s, const std::vector<Tensor>& inputs, WinogradTile tile);

}  // namespace warpnet::device::conv::winograd_bound
