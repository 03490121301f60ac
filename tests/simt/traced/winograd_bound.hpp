// The error bound of the Winograd F(2x2, 3x3) versions (conv v10 and v11,
// dgrad v6 and v7 on their forward view), derived from their fp32
// arithmetic (kernels/conv/winograd.hpp, 10_winograd.cu, winograd_fused.hpp)
// rather than borrowed from the direct sum's. For the candidate tests:
// include it after the kernel files, whose ConvShape it reads.
//
// Each 2x2 output tile is Y = Aᵀ [Σ_c (G g_c Gᵀ) ⊙ (Bᵀ d_c B)] A, d_c the
// 4x4 window of channel c (zeros in the padding), g_c the 3x3 filter. With
// u = 2^-24, every rounding multiplies what passes through it by (1 + δ),
// |δ| <= u, and n of them compose to (1 + θ), |θ| <= γ_n = n·u / (1 − n·u)
// (Higham, ch. 3). Expanded, each output is a signed sum of products d·g,
// the transform matrices' entries as weights, and each product meets:
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
// about 0.4·(1 + 10/C) times the direct versions' bound here, 9C·2^-23·
// Σ|x||w| (half of it at C = 32; 3 to 7 times it at C = 1). A wrong
// transform coefficient or a dropped channel moves an output by a whole
// product, orders above it.
// An absolute 1e-30 covers underflow, as the direct bound's does.
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

#include "core/rounding.hpp"

namespace winograd_bound {

// F(2x2, 3x3)'s matrices as the kernels apply them (10_winograd.cu's header).
constexpr double kBt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
constexpr double kAt[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

// |M| |X| |M|ᵀ, M (R, K), X (K, K): what a transform M X Mᵀ sums, in magnitude.
template <int R, int K>
void abs_sandwich(const double (&M)[R][K], const double (&X)[K][K], double (&out)[R][R]) {
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < R; ++j) {
      out[i][j] = 0;
      for (int a = 0; a < K; ++a)
        for (int b = 0; b < K; ++b) out[i][j] += std::abs(M[i][a]) * std::abs(X[a][b]) * std::abs(M[j][b]);
    }
}

// |G| |g| |G|ᵀ for every filter of w (K, C, 3, 3): 16 per (k, c).
inline std::vector<double> filter_magnitudes(int K, int C, const std::vector<float>& w) {
  std::vector<double> out(size_t(K) * C * 16);
  for (size_t f = 0; f < size_t(K) * C; ++f) {
    double g[3][3], u[4][4];
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s) g[r][s] = w[f * 9 + 3 * r + s];
    abs_sandwich(kG, g, u);
    for (int xi = 0; xi < 16; ++xi) out[f * 16 + xi] = u[xi / 4][xi % 4];
  }
  return out;
}

// |Bᵀ| |d| |B| for the window of tile (ti, tj) in plane (H, W) of x, zeros past its edges.
template <class Shape>
void window_magnitudes(const Shape& g, const float* plane, int ti, int tj, double (&v)[4][4]) {
  double d[4][4];
  for (int r = 0; r < 4; ++r)
    for (int s = 0; s < 4; ++s) {
      const int h = 2 * ti - g.pad + r, w = 2 * tj - g.pad + s;
      d[r][s] = h >= 0 && h < g.H && w >= 0 && w < g.W ? double(plane[size_t(h) * g.W + w]) : 0.0;
    }
  abs_sandwich(kBt, d, v);
}

// The bound of each output of y (N, K, P, Q) = x (N, C, H, W) * w (K, C, 3, 3)
// by F(2x2, 3x3) at stride 1, dilation 1 (the header's derivation).
template <class Shape>
std::vector<double> bound(const Shape& g, const std::vector<float>& x, const std::vector<float>& w) {
  const std::vector<double> U = filter_magnitudes(g.K, g.C, w);
  const double gamma = warpnet::gamma_fp32(double(g.C) + 10);
  std::vector<double> out(size_t(g.N) * g.K * g.P * g.Q);
  std::vector<double> V(size_t(g.C) * 16);  // one tile's windows, every channel
  for (int n = 0; n < g.N; ++n)
    for (int ti = 0; 2 * ti < g.P; ++ti)
      for (int tj = 0; 2 * tj < g.Q; ++tj) {
        for (int c = 0; c < g.C; ++c) {
          double v[4][4];
          window_magnitudes(g, x.data() + (size_t(n) * g.C + c) * g.H * g.W, ti, tj, v);
          for (int xi = 0; xi < 16; ++xi) V[size_t(c) * 16 + xi] = v[xi / 4][xi % 4];
        }
        for (int k = 0; k < g.K; ++k) {
          double S[4][4] = {}, y[2][2];
          for (int c = 0; c < g.C; ++c)
            for (int xi = 0; xi < 16; ++xi) S[xi / 4][xi % 4] += U[(size_t(k) * g.C + c) * 16 + xi] * V[c * 16 + xi];
          abs_sandwich(kAt, S, y);
          for (int a = 0; a < 2 && 2 * ti + a < g.P; ++a)
            for (int b = 0; b < 2 && 2 * tj + b < g.Q; ++b)
              out[((size_t(n) * g.K + k) * g.P + 2 * ti + a) * g.Q + 2 * tj + b] = gamma * y[a][b] + 1e-30;
        }
      }
  return out;
}

}  // namespace winograd_bound
