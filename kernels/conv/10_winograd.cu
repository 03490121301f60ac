// Conv v10 — Winograd F(2x2, 3x3): fewer multiplications than the
// definition, bought with transforms; v9's candidates remain for the layers
// it does not fit.
//
// Idea: a 3x3 filter slid over a 4x4 window of x gives a 2x2 block of y:
//   36 multiplications by the definition. Winograd's minimal filtering
//   (Lavin and Gray, 2015) gets the same four sums from 16 products:
//     Y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A,
//   d the 4x4 window, g the 3x3 filter, ⊙ element by element, with
//     Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]   (adds only)
//     G  = [1 0 0; ½ ½ ½; ½ -½ ½; 0 0 1]             (adds and halvings)
//     Aᵀ = [1 1 1 0; 0 1 -1 -1]                      (adds only).
//   Summed over input channels, each of the 16 positions ξ of the 4x4
//   transformed tile is its own matrix product:
//     M[ξ] (K, T) = U[ξ] (K, C) @ V[ξ] (C, T),  U = G g Gᵀ, V = Bᵀ d B,
//   T = N·⌈P/2⌉·⌈Q/2⌉ output tiles. So a 3x3 convolution becomes 16 GEMMs
//   with 2.25x fewer multiply-adds (16 against 36 per tile and channel pair)
//   and four cheap transforms around them. The registry's FLOPs stay the
//   definition's (what cuDNN's counts assume), so TFLOP/s here can pass the
//   FP32 FMA peak; that is the trade, not an error.
// The price: U, V and M live in a workspace in global memory (16 floats per
//   tile and channel: V is about 4x the size of x, M 4x that of y), written
//   and read back once each, so the GEMMs must be compute-bound for the
//   saving to show: many channels. (cuDNN ran issue 5's 28x28, 128-channel
//   layer at 99.7% of the FP32 FMA peak counted the definition's way, which
//   an implicit GEMM cannot pass; its version 0 now records which algorithm
//   it took.)
//   The transforms round too (adds, halvings), but F(2x2, 3x3)'s are small:
//   at lesson 05's layer (`warpnet trace conv2d/10 --size
//   2,32,14,14,64,3,3,1,1,1`) the worst element errs by 0.38% of the
//   registry's conv2d tolerance, v9's by 1.02% (the sums over C dominate).
//   (F(4x4, 3x3) saves 4x but loses precision fast in fp32; fusing the
//   transforms into the GEMM removes the workspace traffic: later rungs.)
// Applies: 3x3 filters, stride 1, dilation 1, any padding. Elsewhere v9's
//   candidates, after the two Winograd ones (their GEMMs at matmul v9's
//   128x128 tile or a 64x128 one for K <= 64); on a GPU Kernel::tune times
//   every candidate that applies.
// The table's rule (no GPU): Winograd where it applies with C and K at least
//   16 (real GEMMs), the GEMM tile wasting fewer rows of K; else v9's table.
// Changed from v9: the arithmetic: 16 GEMMs on transformed tiles instead of
//   one on the virtual im2col matrix; three transform kernels.
// Trace (emulator, `warpnet trace conv2d/10 --size 2,32,28,28,64,3,3,1,1,1`,
//   the table's 64x128 GEMM tile; every kernel of the launch): global bytes
//   asked 6.69e6 (the registry's formula 6.75e6); the input transform's loads
//   41.6% efficient (overlapping windows at a stride of 2 columns: cache
//   hits on a GPU), its stores 100%; the GEMMs' loads and stores 100%; the
//   output transform's loads 100%, its float2 stores 83.6%. The filter
//   transform's loads are 12.5% efficient (9 floats per thread) on the
//   smallest of the five arrays.
// Measured: not yet on a GPU (written 2026-12-01 on a machine without one).
// Run: build/bin/test_simt -tc="conv winograd*"; build/bin/warpnet trace conv2d/10 --size 2,32,28,28,64,3,3,1,1,1
#include <cstddef>

#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"  // store_float2
// v9's candidates (it includes v8 and v7), and through its pipelined_gemm.hpp
// matmul v9's sgemm_warptiling: C (M,N) = A (M,K) @ B (K,N).
#include "kernels/conv/09_implicit_gemm_pipelined.cu"
#include "kernels/conv/conv_shape.hpp"

namespace conv_v10 {

constexpr int kXi = 16;  // positions of a transformed 4x4 tile

// Output tiles of 2x2: ⌈P/2⌉ x ⌈Q/2⌉ per image, `count` = N of those. V and
// M keep `pitch` = count rounded up to 4 columns per row (V's extra columns
// zero), so the GEMMs' loads and stores are float4s whatever the sizes.
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
__host__ __device__ inline Tiles tiles_of(const ConvShape& g) {
  const int rows = (g.P + 1) / 2, cols = (g.Q + 1) / 2, count = g.N * rows * cols;
  return {rows, cols, count, (count + 3) / 4 * 4};
}

inline bool applies(const ConvShape& g) { return g.R == 3 && g.S == 3 && g.stride == 1 && g.dil == 1; }

// Workspace floats: U (16, K, C), V (16, C, pitch), M (16, K, pitch), one after another.
inline size_t workspace_floats(const ConvShape& g) {
  const size_t T = size_t(tiles_of(g).pitch);
  return size_t(kXi) * (size_t(g.K) * g.C + size_t(g.C) * T + size_t(g.K) * T);
}

}  // namespace conv_v10

// U[ξ][k][c] = (G f Gᵀ)[ξ], ξ = 4·i + j, f = w[k, c]: (3, 3), w: (K, C, 3, 3).
// TURNED (dgrad v6, which runs this file's convolution on dy): f[r][s] =
//   w[c, k, 2 − r, 2 − s], w: (C, K, 3, 3) — the filters transposed and
//   turned by 180°, read in place.
// Launch: block (BLOCK); grid (⌈K·C / BLOCK⌉): a thread per (k, c), c fastest
//   (its 9 loads are one filter's, its 16 stores coalesced across the warp).
template <int BLOCK, bool TURNED>
__global__ void __launch_bounds__(BLOCK)
    winograd_filter_transform(ConvShape g, const float* __restrict__ w, float* __restrict__ U) {
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // k·C + c
  if (i >= g.K * g.C) return;
  const int k = i / g.C, c = i % g.C;
  const float* f = w + (TURNED ? size_t(c) * g.K + k : size_t(i)) * 9;
  const auto at = [&](int r, int s) { return TURNED ? f[8 - (3 * r + s)] : f[3 * r + s]; };
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

// V[ξ][c][t] = (Bᵀ d B)[ξ], d the 4x4 window of x[n, c] whose top left is
// (2·ti − pad, 2·tj − pad), zeros outside x; t = (n·rows + ti)·cols + tj,
// and zeros for the pitch's columns past the last tile.
// Launch: block (BLOCK); grid (⌈C·pitch / BLOCK⌉): a thread per (c, t), t fastest
//   (stores coalesced; neighbouring threads' windows overlap by two columns,
//   so their loads share sectors).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    winograd_input_transform(ConvShape g, const float* __restrict__ x, float* __restrict__ V) {
  const conv_v10::Tiles tiles = conv_v10::tiles_of(g);
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // c·pitch + t
  if (i >= g.C * tiles.pitch) return;
  const size_t plane_v = size_t(g.C) * tiles.pitch;  // one ξ's (C, pitch)
  const int t = i % tiles.pitch, c = i / tiles.pitch;
  if (t >= tiles.count) {
    for (int xi = 0; xi < conv_v10::kXi; ++xi) V[xi * plane_v + i] = 0.0f;
    return;
  }
  const auto [n, ti, tj] = conv_v10::tile_at(tiles, t);
  const int h0 = 2 * ti - g.pad, w0 = 2 * tj - g.pad;
  const float* plane = x + (size_t(n) * g.C + c) * g.H * g.W;
  float d[4][4];
  for (int r = 0; r < 4; ++r)
    for (int s = 0; s < 4; ++s) {
      const int h = h0 + r, w = w0 + s;
      d[r][s] = (h >= 0 && h < g.H && w >= 0 && w < g.W) ? plane[size_t(h) * g.W + w] : 0.0f;
    }
  float Bd[4][4];  // Bᵀ d
  for (int s = 0; s < 4; ++s) {
    Bd[0][s] = d[0][s] - d[2][s];
    Bd[1][s] = d[1][s] + d[2][s];
    Bd[2][s] = d[2][s] - d[1][s];
    Bd[3][s] = d[1][s] - d[3][s];
  }
  for (int r = 0; r < 4; ++r) {
    const float v[4] = {Bd[r][0] - Bd[r][2], Bd[r][1] + Bd[r][2], Bd[r][2] - Bd[r][1],
                        Bd[r][1] - Bd[r][3]};  // (Bᵀ d) B, row r
    for (int s = 0; s < 4; ++s) V[(4 * r + s) * plane_v + i] = v[s];
  }
}

// y[n, k, 2·ti + a, 2·tj + b] = (Aᵀ m A)[a][b], m[ξ] = M[ξ][k][t]; the
// parts of the last tiles past P or Q are not stored.
// Launch: block (BLOCK); grid (⌈K·pitch / BLOCK⌉): a thread per (k, t), t
//   fastest (the 16 loads coalesced; a tile's row pair stored as one float2
//   where Q is even, the warp's stores then contiguous along a row of tiles).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    winograd_output_transform(ConvShape g, const float* __restrict__ M, float* __restrict__ y) {
  const conv_v10::Tiles tiles = conv_v10::tiles_of(g);
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // k·pitch + t
  if (i >= g.K * tiles.pitch) return;
  const int t = i % tiles.pitch, k = i / tiles.pitch;
  if (t >= tiles.count) return;  // the pitch's columns past the last tile
  const auto [n, ti, tj] = conv_v10::tile_at(tiles, t);
  const size_t plane_m = size_t(g.K) * tiles.pitch;  // one ξ's (K, pitch)
  const float* m = M + i;
  float Am[2][4];  // Aᵀ m
  for (int s = 0; s < 4; ++s) {
    const float m0 = m[s * plane_m], m1 = m[(4 + s) * plane_m], m2 = m[(8 + s) * plane_m], m3 = m[(12 + s) * plane_m];
    Am[0][s] = m0 + m1 + m2;
    Am[1][s] = m1 - m2 - m3;
  }
  // With Q even a tile's two columns are in y and 8-byte aligned: one store.
  const bool pairs = g.Q % 2 == 0 && reinterpret_cast<size_t>(y) % 8 == 0;
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

namespace conv_v10 {

constexpr int kTransformBlock = 256;

// The GEMMs' tiles: matmul v9's 128x128 in 8 warps, and 64x128 in 4 warps
// of 32x64 for K <= 64 (rows are output channels, columns tiles).
template <int BM_, int BN_, int WM, int WN, int THREADS>
struct GemmTile {
  static constexpr int BM = BM_, BN = BN_, threads = THREADS;
  static auto kernel() { return sgemm_warptiling<BM, BN, 16, WM, WN, 2, 2, 4, 4, false, false>; }
};
using Gemm0 = GemmTile<128, 128, 64, 32, 256>;
using Gemm1 = GemmTile<64, 128, 32, 64, 128>;
constexpr int kGemmTiles = 2;

// visit.template operator()<T>() for Winograd candidate i (0 <= i < kGemmTiles).
template <class Visit>
auto with_gemm_tile(int i, Visit&& visit) {
  if (i == 0) return visit.template operator()<Gemm0>();
  return visit.template operator()<Gemm1>();
}

// The whole convolution with GEMM tile i: the filter and input transforms,
// the 16 GEMMs, the output transform, on `workspace` (workspace_floats(g)),
// in launch order on the current stream; TURNED: the filters as the filter
// transform's TURNED reads them. The caller checks the launches' errors.
template <bool TURNED = false>
void launch_winograd(int i, const ConvShape& g, const float* x, const float* w, float* y, float* workspace) {
  using ::warpnet::launch_kernel;
  const Tiles tiles = tiles_of(g);
  const int T = tiles.pitch;  // the GEMMs' columns: the tiles, then the pitch's zero columns
  float* U = workspace;
  float* V = U + size_t(kXi) * g.K * g.C;
  float* M = V + size_t(kXi) * g.C * T;
  const dim3 block(kTransformBlock);
  const auto grid_for = [](long long threads) { return dim3(unsigned((threads + kTransformBlock - 1) / kTransformBlock)); };
  launch_kernel(winograd_filter_transform<kTransformBlock, TURNED>, grid_for(1LL * g.K * g.C), block, 0, g, w, U);
  launch_kernel(winograd_input_transform<kTransformBlock>, grid_for(1LL * g.C * T), block, 0, g, x, V);
  with_gemm_tile(i, [&]<class Tile>() {
    const dim3 grid(::warpnet::ceil_div(T, Tile::BN), ::warpnet::ceil_div(g.K, Tile::BM));
    for (int xi = 0; xi < kXi; ++xi) {
      const float* u = U + size_t(xi) * g.K * g.C;
      const float* v = V + size_t(xi) * g.C * T;
      launch_kernel(Tile::kernel(), grid, dim3(Tile::threads), 0, g.K, T, g.C, u, v, M + size_t(xi) * g.K * T);
    }
  });
  launch_kernel(winograd_output_transform<kTransformBlock>, grid_for(1LL * g.K * T), block, 0, g,
                static_cast<const float*>(M), y);
}

// The Winograd candidates, then v9's (its pipelined tiles, v8's direct kernel, v7's tiles).
constexpr int kWinograd = kGemmTiles;
constexpr int kCandidates = kWinograd + conv_v09::kCandidates;

inline const char* candidate_name(int i) {
  if (i < kWinograd) return i == 0 ? "winograd F(2x2,3x3), GEMM 128x128" : "winograd F(2x2,3x3), GEMM 64x128";
  return conv_v09::candidate_name(i - kWinograd);
}

// Whether candidate i can run this problem.
inline bool candidate_applies(int i, const ConvShape& g) {
  return i < kWinograd ? applies(g) : conv_v09::candidate_applies(i - kWinograd, g);
}

// The tuning table: Winograd where it applies with C, K >= 16, at the GEMM
// tile wasting fewer rows (128 on a tie); else v9's table.
inline int table_choice(const ConvShape& g) {
  if (applies(g) && g.C >= 16 && g.K >= 16)
    return ::warpnet::ceil_div(g.K, 64) * 64 < ::warpnet::ceil_div(g.K, 128) * 128 ? 1 : 0;
  return kWinograd + conv_v09::table_choice(g);
}

}  // namespace conv_v10
