// What the Winograd F(2x2, 3x3) versions share (conv v10 and v11, dgrad v6
// and v7): the output tiles and their order, where F(2x2, 3x3) applies, the
// 4x4 window of x and its mask, the input transform Bᵀ d B, the output
// transform Aᵀ m A with its store, and the filter transform U = G f Gᵀ as a
// kernel. The arithmetic is in kernels/conv/10_winograd.cu's header. The
// tiles, windows and masks take any tile size: F(4x4, 3x3) (conv v12,
// winograd_4x4.hpp) uses them with 4x4 tiles and 6x6 windows.
#pragma once
#include <cstddef>
#include <type_traits>

#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"  // store_float2
#include "kernels/conv/conv_shape.hpp"

namespace winograd {

constexpr int kXi = 16;  // positions of a transformed 4x4 tile

// Output tiles of m x m: ⌈P/m⌉ x ⌈Q/m⌉ per image, `count` = N of those. conv
// v10's and v12's V and M keep `pitch` = count rounded up to 4 columns per
// row (V's extra columns zero), so their GEMMs' loads and stores are float4s
// whatever the sizes.
struct Tiles {
  int rows, cols, count, pitch;
};
// Tile t = (n·rows + ti)·cols + tj: its image and its place in y's tile grid.
struct TileAt {
  int n, ti, tj;
};
__host__ __device__ inline TileAt tile_at(const Tiles& tiles, int t) {
  return {t / (tiles.cols * tiles.rows), t / tiles.cols % tiles.rows, t % tiles.cols};
}
__host__ __device__ inline Tiles tiles_of(const ConvShape& g, int m) {
  const int rows = ::warpnet::ceil_div(g.P, m), cols = ::warpnet::ceil_div(g.Q, m), count = g.N * rows * cols;
  return {rows, cols, count, ::warpnet::ceil_div(count, 4) * 4};
}
// F(2x2, 3x3)'s tiles.
__host__ __device__ inline Tiles tiles_of(const ConvShape& g) { return tiles_of(g, 2); }

// Where F(2x2, 3x3) computes the convolution: 3x3 filters, stride 1, dilation 1.
inline bool applies(const ConvShape& g) { return g.R == 3 && g.S == 3 && g.stride == 1 && g.dil == 1; }

// The bits of an AxA window's mask: one register up to 5x5, two for 6x6.
template <int A>
using WindowMask = std::conditional_t<(A * A <= 32), unsigned, unsigned long long>;

// Which elements of the AxA window whose top left is (h0, w0) lie in a
// plane of x (H, W): bit A·r + s. One register for the 16 tests of a 4x4
// window, which a thread that loads the same window of every channel makes
// once.
template <int A = 4>
__device__ inline WindowMask<A> window_mask(const ConvShape& g, int h0, int w0) {
  WindowMask<A> mask = 0;
  for (int r = 0; r < A; ++r)
    for (int s = 0; s < A; ++s) {
      const int h = h0 + r, w = w0 + s;
      if (h >= 0 && h < g.H && w >= 0 && w < g.W) mask |= WindowMask<A>(1) << (A * r + s);
    }
  return mask;
}

// The window of `plane` (H, W) whose top left is element `origin` = h0·W +
// w0 (negative in the padding), zeros where `mask` says it leaves the plane.
template <int A>
__device__ inline void load_window(const float* plane, int W, int origin, WindowMask<A> mask, float (&d)[A][A]) {
  for (int r = 0; r < A; ++r)
    for (int s = 0; s < A; ++s) d[r][s] = (mask >> (A * r + s)) & 1u ? plane[origin + r * W + s] : 0.0f;
}

// v[4·i + j] = (Bᵀ d B)[i][j].
__device__ inline void input_transform(const float (&d)[4][4], float (&v)[kXi]) {
  float Bd[4][4];  // Bᵀ d
  for (int s = 0; s < 4; ++s) {
    Bd[0][s] = d[0][s] - d[2][s];
    Bd[1][s] = d[1][s] + d[2][s];
    Bd[2][s] = d[2][s] - d[1][s];
    Bd[3][s] = d[1][s] - d[3][s];
  }
  for (int r = 0; r < 4; ++r) {  // (Bᵀ d) B, row r
    v[4 * r + 0] = Bd[r][0] - Bd[r][2];
    v[4 * r + 1] = Bd[r][1] + Bd[r][2];
    v[4 * r + 2] = Bd[r][2] - Bd[r][1];
    v[4 * r + 3] = Bd[r][1] - Bd[r][3];
  }
}

// y's 2x2 block of tile (n, ti, tj), channel k: (Aᵀ m A) from m[4·i + j];
// the parts past P or Q are not stored. `pairs` (Q even, y 8-byte aligned):
// a row's two columns are both in y and aligned, one float2 store.
__device__ inline void store_output_tile(const ConvShape& g, float* y, int n, int k, int ti, int tj,
                                         const float (&m)[kXi], bool pairs) {
  float Am[2][4];  // Aᵀ m
  for (int s = 0; s < 4; ++s) {
    Am[0][s] = m[s] + m[4 + s] + m[8 + s];
    Am[1][s] = m[4 + s] - m[8 + s] - m[12 + s];
  }
  float* out = y + (size_t(n) * g.K + k) * g.P * g.Q + 2 * tj;
  for (int a = 0; a < 2; ++a) {
    const int p = 2 * ti + a;
    if (p >= g.P) break;
    const float row[2] = {Am[a][0] + Am[a][1] + Am[a][2], Am[a][1] - Am[a][2] - Am[a][3]};  // (Aᵀ m) A
    float* at = out + size_t(p) * g.Q;
    if (pairs) {
      ::warpnet::store_float2(at, row[0], row[1]);
    } else {
      at[0] = row[0];
      if (2 * tj + 1 < g.Q) at[1] = row[1];
    }
  }
}

// Whether store_output_tile may store pairs.
__host__ __device__ inline bool output_pairs(const ConvShape& g, const float* y) {
  return g.Q % 2 == 0 && reinterpret_cast<size_t>(y) % 8 == 0;
}

constexpr int kTransformBlock = 256;  // threads per block of the transform kernels

// Tap (r, s) of the filter that filter-transform thread i = k·C + c reads:
// w[k, c] (K, C, 3, 3) as it is, or TURNED (the data gradients, which run
// the forward convolution on dy) w[c, k, 2 − r, 2 − s] of w (C, K, 3, 3) —
// the filters transposed and turned by 180°, read in place.
template <bool TURNED>
__device__ inline auto filter_taps(const ConvShape& g, const float* w, int i) {
  const int k = i / g.C, c = i % g.C;
  const float* f = w + (TURNED ? size_t(c) * g.K + k : size_t(i)) * 9;
  return [f](int r, int s) { return TURNED ? f[8 - (3 * r + s)] : f[3 * r + s]; };
}

}  // namespace winograd

// U[ξ][k][c] = (G f Gᵀ)[ξ], ξ = 4·i + j, f = w[k, c]: (3, 3), w: (K, C, 3, 3).
// TURNED (dgrad v6 and v7): the filters transposed and turned by 180°, read
//   in place (filter_taps).
// Launch: block (BLOCK); grid (⌈K·C / BLOCK⌉): a thread per (k, c), c fastest
//   (its 9 loads are one filter's, its 16 stores coalesced across the warp).
template <int BLOCK, bool TURNED>
__global__ void __launch_bounds__(BLOCK)
    winograd_filter_transform(ConvShape g, const float* __restrict__ w, float* __restrict__ U) {
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // k·C + c
  if (i >= g.K * g.C) return;
  const auto at = winograd::filter_taps<TURNED>(g, w, i);
  float Gg[4][3];  // G f: (4, 3)
  for (int s = 0; s < 3; ++s) {
    const float f0 = at(0, s), f1 = at(1, s), f2 = at(2, s);
    Gg[0][s] = f0;
    Gg[1][s] = 0.5f * (f0 + f1 + f2);
    Gg[2][s] = 0.5f * (f0 - f1 + f2);
    Gg[3][s] = f2;
  }
  const size_t plane = size_t(g.K) * g.C;  // one ξ's (K, C)
  for (int r = 0; r < 4; ++r) {
    const float u[4] = {Gg[r][0], 0.5f * (Gg[r][0] + Gg[r][1] + Gg[r][2]), 0.5f * (Gg[r][0] - Gg[r][1] + Gg[r][2]),
                        Gg[r][2]};  // (G g) Gᵀ, row r
    for (int s = 0; s < 4; ++s) U[(4 * r + s) * plane + i] = u[s];
  }
}

namespace winograd {

// U (16, K, C) from the filters: the filter transform, on the current stream.
template <bool TURNED>
void launch_filter_transform(const ConvShape& g, const float* w, float* U) {
  ::warpnet::launch_kernel(winograd_filter_transform<kTransformBlock, TURNED>,
                           dim3(unsigned(::warpnet::ceil_div(1LL * g.K * g.C, kTransformBlock))),
                           dim3(kTransformBlock), 0, g, w, U);
}

}  // namespace winograd
