// Conv v12 — Winograd F(4x4, 3x3): a 4x4 block of y per transformed tile,
// so 2.25 products per output and channel where F(2x2, 3x3) needs 4, and
// workspaces 2.25x x's and y's sizes where F(2x2)'s are 4x; v11's candidates
// remain.
//
// Idea: v10's method (its header) with a 6x6 window of x per 4x4 block of
//   y: 36 products where the definition takes 144 (F(2x2): 16 for 36). The
//   matrices (Lavin and Gray, 2015, the points 0, ±1, ±2, ∞):
//     Bᵀ = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0;
//           0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
//     G  = [¼ 0 0; -⅙ -⅙ -⅙; -⅙ ⅙ -⅙; 1/24 1/12 ⅙; 1/24 -1/12 ⅙; 0 0 1]
//     Aᵀ = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
//   Summed over input channels, each of the 36 positions ξ is its own
//   matrix product, M[ξ] (K, T) = U[ξ] (K, C) @ V[ξ] (C, T), now with T =
//   N·⌈P/4⌉·⌈Q/4⌉ tiles: 36 GEMMs of a quarter of v10's columns, 1.78x
//   fewer multiply-adds in all, in one launch (ξ = blockIdx.z) at v10's two
//   GEMM tiles. V and M hold 36 floats per tile and channel for 16 outputs
//   of a plane, against v10's 16 per 4: the workspace traffic that held v10
//   back at 64 channels (issue 5's 56x56 layer) shrinks by the same 1.78x.
// The price: accuracy. The transforms' entries reach 5 (Bᵀ), 8 (Aᵀ) and ⅙
//   (G, not a float), so an output sums its products with larger weights
//   through more roundings: the bound derived for this arithmetic
//   (src/device/kernels/conv/winograd_bound.hpp: C + 18 roundings over the
//   transforms' products weighted by |Aᵀ|, |G| and |Bᵀ|) is 13x F(2x2,
//   3x3)'s at 32 channels, 10x at 128 (summed over a layer). F(6x6, 3x3)
//   would save more and lose more; cuDNN's non-fused Winograd stops at 4x4
//   too.
// Applies: 3x3 filters, stride 1, dilation 1, any padding. Elsewhere v11's
//   candidates, after the two F(4x4) ones; on a GPU Kernel::tune times every
//   candidate that applies.
// The table's rule (no GPU): F(4x4) where v10's table takes Winograd (C and
//   K at least 16) and its GEMMs multiply less than F(2x2)'s (36·⌈P/4⌉·⌈Q/4⌉
//   against 16·⌈P/2⌉·⌈Q/2⌉ per image and channel pair; not at 1, 2, 5 or 6
//   outputs a side, where the cut tiles cost what F(4x4) saves), at v10's
//   GEMM tile for K; else v11's table.
// Changed from v10: 6x6 windows at a stride of 4, 36 GEMMs, 4x4 output
//   blocks stored as float4 rows where Q is a multiple of 4 (float2 pairs
//   where it is even); the transforms
//   in kernels/conv/winograd_4x4.hpp, the tiles and windows in winograd.hpp
//   (shared with v10).
// Trace (emulator, `warpnet trace conv2d/12 --size 2,32,14,14,64,3,3,1,1,1`,
//   lesson 05's layer, and conv2d/10): global bytes asked 1.75e6 against
//   1.83e6 (at N = 2 the 32 tiles are few and U, 36·K·C, is the largest
//   array; at issue 5's N = 64 layers the registry's formula gives 688 /
//   377 / 327 MB against v10's 1182 / 644 / 433); the worst element 0.22%
//   of its bound away (v10: 0.53% of a bound 13x smaller); the GEMMs'
//   loads and stores 100% efficient; the input transform's loads 20.8%
//   (6x6 windows 4 apart: cache hits on a GPU), the output transform's
//   float2 stores 39.7% (Q = 14: a row's two pairs are two stores, each
//   filling at most half of the sectors it touches; float4 rows where Q is
//   a multiple of 4, as at 56x56 and 28x28).
// Measured: not yet on a GPU.
// Run: build/bin/test_simt -tc="conv winograd 4x4*"; build/bin/warpnet trace conv2d/12 --size 2,32,28,28,64,3,3,1,1,1
#include <cstddef>

#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/11_winograd_fused.cu"  // v11's candidates (it includes v10, v9, v8 and v7)
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/winograd.hpp"      // tiles, windows
#include "kernels/conv/winograd_4x4.hpp"  // the F(4x4, 3x3) transforms

namespace conv_v12 {

using winograd::f4x4::kXi;

// F(4x4)'s tiles: ⌈P/4⌉ x ⌈Q/4⌉ per image.
__host__ __device__ inline winograd::Tiles tiles_of(const ConvShape& g) {
  return winograd::tiles_of(g, winograd::f4x4::kTile);
}

// Workspace floats: U (36, K, C), V (36, C, pitch), M (36, K, pitch), one after another.
inline size_t workspace_floats(const ConvShape& g) {
  const size_t T = size_t(tiles_of(g).pitch);
  return size_t(kXi) * (size_t(g.K) * g.C + size_t(g.C) * T + size_t(g.K) * T);
}

}  // namespace conv_v12

// V[ξ][c][t] = (Bᵀ d B)[ξ], d the 6x6 window of x[n, c] whose top left is
// (4·ti − pad, 4·tj − pad), zeros outside x; t = (n·rows + ti)·cols + tj,
// and zeros for the pitch's columns past the last tile.
// Launch: block (BLOCK); grid (⌈C·pitch / BLOCK⌉): a thread per (c, t), t fastest
//   (stores coalesced; neighbouring threads' windows overlap by two columns,
//   so their loads share sectors).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    winograd_4x4_input_transform(ConvShape g, const float* __restrict__ x, float* __restrict__ V) {
  using namespace winograd::f4x4;
  const winograd::Tiles tiles = conv_v12::tiles_of(g);
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // c·pitch + t
  if (i >= g.C * tiles.pitch) return;
  const size_t plane_v = size_t(g.C) * tiles.pitch;  // one ξ's (C, pitch)
  const int t = i % tiles.pitch, c = i / tiles.pitch;
  if (t >= tiles.count) {
    for (int xi = 0; xi < kXi; ++xi) V[xi * plane_v + i] = 0.0f;
    return;
  }
  const auto [n, ti, tj] = winograd::tile_at(tiles, t);
  float d[kWindow][kWindow], v[kXi];
  const int h0 = kTile * ti - g.pad, w0 = kTile * tj - g.pad;
  winograd::load_window(x + (size_t(n) * g.C + c) * g.H * g.W, g.W, h0 * g.W + w0,
                        winograd::window_mask<kWindow>(g, h0, w0), d);
  input_transform(d, v);
  for (int xi = 0; xi < kXi; ++xi) V[xi * plane_v + i] = v[xi];
}

// y[n, k, 4·ti + a, 4·tj + b] = (Aᵀ m A)[a][b], m[ξ] = M[ξ][k][t]; the
// parts of the last tiles past P or Q are not stored.
// Launch: block (BLOCK); grid (⌈K·pitch / BLOCK⌉): a thread per (k, t), t
//   fastest (the 36 loads coalesced; a tile's rows stored as float4s where
//   Q is a multiple of 4, the warp's stores then contiguous along a row of
//   tiles, as float2 pairs where Q is only even).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    winograd_4x4_output_transform(ConvShape g, const float* __restrict__ M, float* __restrict__ y) {
  using namespace winograd::f4x4;
  const winograd::Tiles tiles = conv_v12::tiles_of(g);
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // k·pitch + t
  if (i >= g.K * tiles.pitch) return;
  const int t = i % tiles.pitch, k = i / tiles.pitch;
  if (t >= tiles.count) return;  // the pitch's columns past the last tile
  const auto [n, ti, tj] = winograd::tile_at(tiles, t);
  const size_t plane_m = size_t(g.K) * tiles.pitch;  // one ξ's (K, pitch)
  float m[kXi];
  for (int xi = 0; xi < kXi; ++xi) m[xi] = M[xi * plane_m + i];
  store_output_tile(g, y, n, k, ti, tj, m, output_stores(g, y));
}

namespace conv_v12 {

using winograd::kTransformBlock;

// The whole convolution with v10's GEMM tile i: the filter and input
// transforms, the 36 GEMMs (one launch), the output transform, on
// `workspace` (workspace_floats(g)), in launch order on the current stream.
// The caller checks the launches' errors.
inline void launch_winograd(int i, const ConvShape& g, const float* x, const float* w, float* y, float* workspace) {
  using ::warpnet::launch_kernel;
  const int T = tiles_of(g).pitch;  // the GEMMs' columns: the tiles, then the pitch's zero columns
  float* U = workspace;
  float* V = U + size_t(kXi) * g.K * g.C;
  float* M = V + size_t(kXi) * g.C * T;
  const dim3 block(kTransformBlock);
  const auto grid_for = [](long long threads) {
    return dim3(unsigned((threads + kTransformBlock - 1) / kTransformBlock));
  };
  launch_kernel(winograd_4x4_filter_transform<kTransformBlock>, grid_for(1LL * g.K * g.C), block, 0, g, w, U);
  launch_kernel(winograd_4x4_input_transform<kTransformBlock>, grid_for(1LL * g.C * T), block, 0, g, x, V);
  conv_v10::launch_gemms(i, g.K, T, g.C, kXi, U, V, M);  // M[ξ] = U[ξ] @ V[ξ], the 36 in one launch
  launch_kernel(winograd_4x4_output_transform<kTransformBlock>, grid_for(1LL * g.K * T), block, 0, g,
                static_cast<const float*>(M), y);
}

// The two F(4x4) candidates (v10's GEMM tiles), then v11's (its fused kernel, v10's, v9's ...).
constexpr int kWinograd = conv_v10::kGemmTiles;
constexpr int kCandidates = kWinograd + conv_v11::kCandidates;

inline const char* candidate_name(int i) {
  if (i < kWinograd) return i == 0 ? "winograd F(4x4,3x3), GEMM 128x128" : "winograd F(4x4,3x3), GEMM 64x128";
  return conv_v11::candidate_name(i - kWinograd);
}

// Whether candidate i can run this problem.
inline bool candidate_applies(int i, const ConvShape& g) {
  return i < kWinograd ? winograd::applies(g) : conv_v11::candidate_applies(i - kWinograd, g);
}

// Whether F(4x4)'s GEMMs multiply less than F(2x2)'s at these planes: 36
// products per 4x4 tile against 16 per 2x2 tile, both counting the tiles cut
// at the planes' edges whole.
inline bool fewer_products_than_2x2(const ConvShape& g) {
  const winograd::Tiles four = tiles_of(g), two = winograd::tiles_of(g);
  return 36LL * four.count < 16LL * two.count;
}

// The tuning table: F(4x4) where v10's table takes Winograd and F(4x4)
// multiplies less, at v10's GEMM tile (the candidates' order is v10's);
// else v11's table.
inline int table_choice(const ConvShape& g) {
  const int v10 = conv_v10::table_choice(g);
  if (v10 < conv_v10::kWinograd && fewer_products_than_2x2(g)) return v10;
  return kWinograd + conv_v11::table_choice(g);
}

}  // namespace conv_v12
