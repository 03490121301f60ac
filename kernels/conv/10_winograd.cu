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
//   layer at 99.6% of the FP32 FMA peak counted the definition's way
//   on 2026-11-30 (113% on 2026-12-04), which
//   an implicit GEMM cannot pass; its version 0 now records which algorithm
//   it took.)
//   The transforms round too (adds, halvings), so every check of the
//   Winograd candidates allows a bound derived for their arithmetic
//   (src/device/kernels/conv/winograd_bound.hpp: C + 10 roundings over the
//   transforms' products, about half the direct sum's bound at C = 32). At
//   lesson 05's layer (`warpnet trace conv2d/10 --size
//   2,32,14,14,64,3,3,1,1,1`) the worst element errs by 0.53% of it: 0.38%
//   of the direct sum's bound, against v9's 1.02% (F(2x2, 3x3)'s transforms
//   are small; the sums over C dominate).
//   (F(4x4, 3x3) saves 4x but loses precision fast in fp32; fusing the
//   transforms into the products removes the workspace traffic: v11.)
// Applies: 3x3 filters, stride 1, dilation 1, any padding. Elsewhere v9's
//   candidates, after the two Winograd ones (their GEMMs at matmul v9's
//   128x128 tile or a 64x128 one for K <= 64); on a GPU Kernel::tune times
//   every candidate that applies.
// The table's rule (no GPU): Winograd where it applies with C and K at least
//   16 (real GEMMs), the GEMM tile wasting fewer rows of K; else v9's table.
// Changed from v9: the arithmetic: 16 GEMMs on transformed tiles instead of
//   one on the virtual im2col matrix, in one launch (matmul v9's
//   sgemm_warptiling_batched, ξ = blockIdx.z: a layer's GEMM alone may not
//   fill the GPU, 16 of them do); three transform kernels (the filter
//   transform and the per-tile math in winograd.hpp, shared with v11 and
//   dgrad v6, v7).
// Trace (emulator, `warpnet trace conv2d/10 --size 2,32,28,28,64,3,3,1,1,1`,
//   the table's 64x128 GEMM tile; every kernel of the launch): global bytes
//   asked 6.69e6 (the registry's formula 6.75e6); the input transform's loads
//   41.6% efficient (overlapping windows at a stride of 2 columns: cache
//   hits on a GPU), its stores 100%; the GEMMs' loads and stores 100%; the
//   output transform's loads 100%, its float2 stores 83.6%. The filter
//   transform's loads are 12.5% efficient (9 floats per thread) on the
//   smallest of the five arrays.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-cnn.json, `warpnet bench conv2d`),
//   N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14: 0.368 / 0.283 / 0.265 ms,
//   40.2 / 52.3 / 55.9 TFLOP/s, 61.7% / 68.9% / 91.1% of cuDNN (fp32, no TF32) in the same run;
//   the tuner picked the GEMM tile 64x128 / 128x128 / 64x128 (cuDNN took FFT_TILING / FFT_TILING / FFT).
// Run: build/bin/test_simt -tc="conv winograd*"; build/bin/warpnet trace conv2d/10 --size 2,32,28,28,64,3,3,1,1,1
#include <cstddef>

#include "kernels/common/cuda_compat.hpp"
// v9's candidates (it includes v8 and v7), and through its pipelined_gemm.hpp
// matmul v9's sgemm_warptiling: C (M,N) = A (M,K) @ B (K,N).
#include "kernels/conv/09_implicit_gemm_pipelined.cu"
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/winograd.hpp"         // tiles, windows, the transforms
#include "kernels/conv/winograd_gemms.hpp"  // the GEMMs' tiles and launch

namespace conv_v10 {

using winograd::kXi;

// Workspace floats: U (16, K, C), V (16, C, pitch), M (16, K, pitch), one after another.
inline size_t workspace_floats(const ConvShape& g) {
  const size_t T = size_t(winograd::tiles_of(g).pitch);
  return size_t(kXi) * (size_t(g.K) * g.C + size_t(g.C) * T + size_t(g.K) * T);
}

}  // namespace conv_v10

// V[ξ][c][t] = (Bᵀ d B)[ξ], d the 4x4 window of x[n, c] whose top left is
// (2·ti − pad, 2·tj − pad), zeros outside x; t = (n·rows + ti)·cols + tj,
// and zeros for the pitch's columns past the last tile.
// Launch: block (BLOCK); grid (⌈C·pitch / BLOCK⌉): a thread per (c, t), t fastest
//   (stores coalesced; neighbouring threads' windows overlap by two columns,
//   so their loads share sectors).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    winograd_input_transform(ConvShape g, const float* __restrict__ x, float* __restrict__ V) {
  const winograd::Tiles tiles = winograd::tiles_of(g);
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // c·pitch + t
  if (i >= g.C * tiles.pitch) return;
  const size_t plane_v = size_t(g.C) * tiles.pitch;  // one ξ's (C, pitch)
  const int t = i % tiles.pitch, c = i / tiles.pitch;
  if (t >= tiles.count) {
    for (int xi = 0; xi < winograd::kXi; ++xi) V[xi * plane_v + i] = 0.0f;
    return;
  }
  const auto [n, ti, tj] = winograd::tile_at(tiles, t);
  float d[4][4], v[winograd::kXi];
  const int h0 = 2 * ti - g.pad, w0 = 2 * tj - g.pad;
  winograd::load_window(x + (size_t(n) * g.C + c) * g.H * g.W, g.W, h0 * g.W + w0, winograd::window_mask(g, h0, w0),
                        d);
  winograd::input_transform(d, v);
  for (int xi = 0; xi < winograd::kXi; ++xi) V[xi * plane_v + i] = v[xi];
}

// y[n, k, 2·ti + a, 2·tj + b] = (Aᵀ m A)[a][b], m[ξ] = M[ξ][k][t]; the
// parts of the last tiles past P or Q are not stored.
// Launch: block (BLOCK); grid (⌈K·pitch / BLOCK⌉): a thread per (k, t), t
//   fastest (the 16 loads coalesced; a tile's row pair stored as one float2
//   where Q is even, the warp's stores then contiguous along a row of tiles).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    winograd_output_transform(ConvShape g, const float* __restrict__ M, float* __restrict__ y) {
  const winograd::Tiles tiles = winograd::tiles_of(g);
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // k·pitch + t
  if (i >= g.K * tiles.pitch) return;
  const int t = i % tiles.pitch, k = i / tiles.pitch;
  if (t >= tiles.count) return;  // the pitch's columns past the last tile
  const auto [n, ti, tj] = winograd::tile_at(tiles, t);
  const size_t plane_m = size_t(g.K) * tiles.pitch;  // one ξ's (K, pitch)
  float m[winograd::kXi];
  for (int xi = 0; xi < winograd::kXi; ++xi) m[xi] = M[xi * plane_m + i];
  winograd::store_output_tile(g, y, n, k, ti, tj, m, winograd::output_pairs(g, y));
}

namespace conv_v10 {

using winograd::kTransformBlock;

// The whole convolution with GEMM tile i: the filter and input transforms,
// the 16 GEMMs (one launch), the output transform, on `workspace`
// (workspace_floats(g)), in launch order on the current stream; TURNED: the
// filters as the filter transform's TURNED reads them. The caller checks the
// launches' errors.
template <bool TURNED = false>
void launch_winograd(int i, const ConvShape& g, const float* x, const float* w, float* y, float* workspace) {
  using ::warpnet::launch_kernel;
  const winograd::Tiles tiles = winograd::tiles_of(g);
  const int T = tiles.pitch;  // the GEMMs' columns: the tiles, then the pitch's zero columns
  float* U = workspace;
  float* V = U + size_t(kXi) * g.K * g.C;
  float* M = V + size_t(kXi) * g.C * T;
  const dim3 block(kTransformBlock);
  const auto grid_for = [](long long threads) {
    return dim3(unsigned(::warpnet::ceil_div(threads, kTransformBlock)));
  };
  winograd::launch_filter_transform<TURNED>(g, w, U);
  launch_kernel(winograd_input_transform<kTransformBlock>, grid_for(1LL * g.C * T), block, 0, g, x, V);
  winograd::launch_gemms(i, g.K, T, g.C, kXi, U, V, M);  // M[ξ] = U[ξ] @ V[ξ], the 16 in one launch
  launch_kernel(winograd_output_transform<kTransformBlock>, grid_for(1LL * g.K * T), block, 0, g,
                static_cast<const float*>(M), y);
}

// The Winograd candidates, then v9's (its pipelined tiles, v8's direct kernel, v7's tiles).
constexpr int kWinograd = winograd::kGemmTiles;
constexpr int kCandidates = kWinograd + conv_v09::kCandidates;

inline const char* candidate_name(int i) {
  if (i < kWinograd) return i == 0 ? "winograd F(2x2,3x3), GEMM 128x128" : "winograd F(2x2,3x3), GEMM 64x128";
  return conv_v09::candidate_name(i - kWinograd);
}

// Whether candidate i can run this problem.
inline bool candidate_applies(int i, const ConvShape& g) {
  return i < kWinograd ? winograd::applies(g) : conv_v09::candidate_applies(i - kWinograd, g);
}

// The tuning table: Winograd where it applies with C, K >= 16, at the GEMM
// tile wasting fewer rows (128 on a tie); else v9's table.
inline int table_choice(const ConvShape& g) {
  if (winograd::applies(g) && g.C >= 16 && g.K >= 16)
    return ::warpnet::ceil_div(g.K, 64) * 64 < ::warpnet::ceil_div(g.K, 128) * 128 ? 1 : 0;
  return kWinograd + conv_v09::table_choice(g);
}

}  // namespace conv_v10
