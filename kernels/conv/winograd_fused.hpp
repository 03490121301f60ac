// The fused Winograd F(2x2, 3x3) kernel of conv v11 (its header says how it
// works), shared with dgrad v7, which runs it on dy with the filters turned:
// the block's shape, the kernel, and its launch after the filter transform.
#pragma once
#include <cstddef>

#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"  // load_float4, store_float4
#include "kernels/common/ptx.hpp"          // cp.async
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/winograd.hpp"       // tiles, windows, the transforms

namespace winograd::fused {

using winograd::kXi;
constexpr int BK = 32;        // output channels per block
constexpr int BT = 32;        // tiles per block
constexpr int BC = 8;         // input channels per chunk
constexpr int kThreads = 256;  // 16 per ξ, each an 8x8 piece of (BK x BT)
constexpr int kPitch = 36;     // a row of Us, Vs or Ms: 32 floats + 4 of padding
constexpr const char* kName = "winograd F(2x2,3x3) fused, 32x32 per block";  // as a tuner's candidate
static_assert(kThreads == kXi * (BK / 8) * (BT / 8), "one 8x8 piece per thread per ξ");
static_assert(kThreads == BC * BT, "one window per thread per chunk");
static_assert(BK % 16 == 0, "the output meets in Ms 16 channels at a time");

}  // namespace winograd::fused

// y = x * w by F(2x2, 3x3), U: the transformed filters (16, K, C) (winograd.hpp's filter transform).
// Launch: block (256); grid (⌈T/32⌉, ⌈K/32⌉), T = N·⌈P/2⌉·⌈Q/2⌉ tiles.
__global__ void __launch_bounds__(winograd::fused::kThreads, 2)
    winograd_fused(ConvShape g, const float* __restrict__ x, const float* __restrict__ U, float* __restrict__ y) {
  using namespace winograd::fused;
  // Us = staged[0]: Us[ξ][c][k]; Vs = staged[1]: Vs[ξ][c][t], during the
  // chunks; the same 9216 floats as Ms[ξ][k][t] (16 channels) after them.
  __shared__ __align__(16) float staged[2][kXi][BC][kPitch];
  float(&Us)[kXi][BC][kPitch] = staged[0];
  float(&Vs)[kXi][BC][kPitch] = staged[1];
  const int tid = threadIdx.x;
  const int xi = tid / 16, kb = (tid % 16) / 4 * 8, tb = (tid % 4) * 8;  // this thread's ξ and 8x8 piece
  const winograd::Tiles tiles = winograd::tiles_of(g);
  const int t0 = blockIdx.x * BT, k0 = blockIdx.y * BK;

  // This thread's window in every chunk: channel c0 + wc of tile t0 + wt.
  const int wc = tid / BT, wt = tid % BT;
  const bool tile_in = t0 + wt < tiles.count;
  const winograd::TileAt at = winograd::tile_at(tiles, tile_in ? t0 + wt : 0);
  const int h0 = 2 * at.ti - g.pad, w0 = 2 * at.tj - g.pad;
  const unsigned window = tile_in ? winograd::window_mask(g, h0, w0) : 0u;  // none past the last tile
  const float* x_n = x + size_t(at.n) * g.C * g.H * g.W;
  const size_t plane_u = size_t(g.K) * g.C;  // one ξ's (K, C) of U

  float acc[8][8] = {};  // M[ξ][k0 + kb + i][t0 + tb + j]
  for (int c0 = 0; c0 < g.C; c0 += BC) {
    // U's chunk, Us[ξ][c][k] = U[ξ][k0 + k][c0 + c]: 16 per thread, c fastest
    // (8 consecutive floats of a row of U per 8 lanes), as 4-byte cp.async
    // (zero-filled past K or C): no registers, in flight while x's windows
    // are loaded and transformed.
    {
      const int c = tid % BC, k = tid / BC;  // one ξ (r) per round: 8 x 32 = 256
      const bool in = k0 + k < g.K && c0 + c < g.C;
      const float* from = U + size_t(k0 + k) * g.C + c0 + c;
      // Not unrolled: 16 addresses kept for every chunk would cost 32 registers.
#pragma unroll 1
      for (int r = 0; r < kXi; ++r)
        ::warpnet::ptx::cp_async_ca<4>(&Us[r][c][k], in ? from + r * plane_u : U, in ? 4 : 0);
      ::warpnet::ptx::cp_async_commit();
    }
    // x's chunk: one window per thread, transformed.
    float d[4][4], v[kXi];
    winograd::load_window(x_n + size_t(c0 + wc) * g.H * g.W, g.W, h0 * g.W + w0, c0 + wc < g.C ? window : 0u, d);
    winograd::input_transform(d, v);
    for (int r = 0; r < kXi; ++r) Vs[r][wc][wt] = v[r];
    ::warpnet::ptx::cp_async_wait<0>();  // this thread's copies of U have landed
    __syncthreads();

    // M[ξ] (k, t) += Σ_c U[ξ](k, c) V[ξ](c, t) over the chunk, an 8x8 piece.
#pragma unroll
    for (int c = 0; c < BC; ++c) {
      float u[8], vv[8];
      const float4 u0 = ::warpnet::load_float4(&Us[xi][c][kb]), u1 = ::warpnet::load_float4(&Us[xi][c][kb + 4]);
      const float4 v0 = ::warpnet::load_float4(&Vs[xi][c][tb]), v1 = ::warpnet::load_float4(&Vs[xi][c][tb + 4]);
      u[0] = u0.x, u[1] = u0.y, u[2] = u0.z, u[3] = u0.w, u[4] = u1.x, u[5] = u1.y, u[6] = u1.z, u[7] = u1.w;
      vv[0] = v0.x, vv[1] = v0.y, vv[2] = v0.z, vv[3] = v0.w, vv[4] = v1.x, vv[5] = v1.y, vv[6] = v1.z, vv[7] = v1.w;
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += u[i] * vv[j];
    }
    __syncthreads();
  }

  // The output, 16 channels at a time: the pieces meet in Ms[ξ][k][t] (Us
  // and Vs' floats, in that order), then each thread takes two (k, t).
  float* Ms = &staged[0][0][0][0];
  static_assert(sizeof(staged) == sizeof(float) * kXi * 16 * kPitch, "Ms[16][16][kPitch] is exactly Us then Vs");
  const bool pairs = winograd::output_pairs(g, y);
  for (int half = 0; half < BK / 16; ++half) {
    if (kb / 16 == half)
      for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; j += 4)
          ::warpnet::store_float4(Ms + (xi * 16 + kb % 16 + i) * kPitch + tb + j,
                                  make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
    __syncthreads();
    for (int p = tid; p < 16 * BT; p += kThreads) {
      const int kk = p / BT, t = p % BT;
      const int k = k0 + half * 16 + kk;
      if (k >= g.K || t0 + t >= tiles.count) continue;
      float m[kXi];
      for (int r = 0; r < kXi; ++r) m[r] = Ms[(r * 16 + kk) * kPitch + t];
      const winograd::TileAt out = winograd::tile_at(tiles, t0 + t);
      winograd::store_output_tile(g, y, out.n, k, out.ti, out.tj, m, pairs);
    }
    __syncthreads();
  }
}

namespace winograd::fused {

// U's floats in the workspace: 16·K·C.
inline size_t workspace_floats(const ConvShape& g) { return size_t(kXi) * g.K * g.C; }

// The fused kernel's grid.
inline dim3 grid(const ConvShape& g) {
  return dim3(::warpnet::ceil_div(winograd::tiles_of(g).count, BT), ::warpnet::ceil_div(g.K, BK));
}

// y = x * w: the filter transform into `workspace` (workspace_floats(g)),
// then the fused kernel, in launch order on the current stream; TURNED: the
// filters as the filter transform's TURNED reads them (dgrad v7). The caller
// checks the launches' errors.
template <bool TURNED = false>
void launch(const ConvShape& g, const float* x, const float* w, float* y, float* workspace) {
  launch_filter_transform<TURNED>(g, w, workspace);
  ::warpnet::launch_kernel(winograd_fused, grid(g), dim3(kThreads), 0, g, x, static_cast<const float*>(workspace),
                           y);
}

}  // namespace winograd::fused
