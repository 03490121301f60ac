// Conv wgrad v5 — pipelined implicit GEMM: wgrad v3's GEMM (the taps as
// rows, the pixels as the reduction, split among blocks) on conv v9's
// machinery: two cp.async stages, warp tiles, float4 reads of the tiles.
//
// Idea: at ResNet's 3x3 layers wgrad v3 ran at 12-14 TFLOP/s on an H200
//   (2026-12-04), under half of what conv v9 and dgrad v5 reach on the same
//   layers, for the reasons they left behind: one stage, so every step
//   loads, waits at a barrier, multiplies and waits again, with nothing in
//   flight while it multiplies; and scalar reads of the tiles, a shared load
//   for each multiply-add or two. Here the next step's tiles are copied
//   (cp.async) while this step's are multiplied, by matmul v9's
//   multiply_stage: at a 64x32 warp tile each thread holds 8x8 outputs (four
//   4x4 sub-tiles) and does 64 FFMA for every 4 float4 loads from shared
//   memory, where v3's 4x4 thread tile did 16 for 8 scalar loads.
// The GEMM (v3's), rows m = crs, columns n = k, the reduction over pixels l:
//     dW^T (C·R·S, K) = X (C·R·S, L) @ DY (L, K),   L = N·P·Q, l = (n, p, q)
//     X[crs][l] = x[n, c, p·stride − pad + r·dil, q·stride − pad + s·dil]   (0 in the padding)
//     DY[l][k]  = dy[n, k, p, q]
// The copies: thread t owns pixel column t % BK of both tiles and rows
//   t / BK + i·(threads / BK) of each: a warp copies 8 consecutive pixels
//   (32 bytes) of 4 rows, X through v3's tap table (s_taps, a broadcast per
//   row) and DY straight from dy; 4-byte cp.async, zero-filled in the
//   padding and past C·R·S, K or the slice. Rows of the stages are BM + 4
//   floats apart, so the 32 lanes' stores land on 32 banks.
// The pixel, with no division in the loop: each thread splits its first
//   pixel into (n, p, q) once and moves it BK pixels on per step by carrying
//   q into p and p into n (v3 divided it by P·Q and by Q every step).
// Split as v3 (split_for: about 264 blocks, slices of at least 4 steps,
//   none empty), each block writing part[z], then sum_splits (kernels/common)
//   in a fixed order: every run gives the same bits.
// Epilogue: a thread's 4 rows are 4 consecutive crs of one k: one float4
//   store when C·R·S % 4 == 0 (dw[k][crs], 8 lanes along crs: 128 bytes).
// Tiles: 128x128 in 8 warps of 64x32 or 4 of 64x64, 128x64 and 64x64 in 4
//   warps (kPipelined), BK = 8; then wgrad v4's candidates (its direct kernel
//   for few output channels, v3's seven tiles). On a GPU Kernel::tune times
//   them all; without one the table takes v4's direct kernel where it
//   applies, else the largest pipelined tile within 25% of the fewest padded
//   outputs (v3's rule: the splits fill the GPU whatever the tile).
//   ptxas (nvcc 13.0, sm_90a; bench/results/ptxas-sm90a-2026-12-07.txt): the
//   128-thread tiles 96 (64x64), 153 (128x64) and 211 (128x128) registers,
//   no spills; the 256-thread 128x128, held to 128 by the two blocks an SM
//   its launch bounds ask for, spills 12 bytes (conv v9's same tile: 32).
// Changed from wgrad v3: two stages of cp.async copies instead of one of
//   loads and stores; warp tiles and float4 reads (matmul v9's) instead of a
//   thread tile read a float at a time; the pixel carried from step to step
//   instead of divided; float4 stores of dw.
// Trace (emulator, `warpnet trace conv2d_wgrad/05 --size 2,32,14,14,64,3,3,1,1,1`
//   and /03, lesson 05's layer): the table takes 128x64 in 10 splits of 40
//   pixels (v3: 64x64x16 in 5); 316 memory instructions per warp (v3 753),
//   23,520 shared load requests (v3 132,000), all 1.00-way, and the cp.async
//   stores 1.00-way; dw's float4 stores 16 sectors per request (100%). The
//   price: global loads 47.3% efficient, 7.10 sectors per request (v3 82.3%,
//   4.27): a warp's rows are 8 pixels (32 bytes), which a tap's shift, a
//   14-pixel row's end or a 196-pixel plane's misalignment split over two
//   sectors, where v3's 16-pixel rows at this size split less often. At
//   `--size 1,16,56,56,64,3,3,1,1,1` (64x64 tiles): 221 memory instructions
//   per warp against v3's 600, global loads 75.2% efficient (v3 93.8%).
// Measured: not yet measured on a GPU.
// Run: build/bin/test_simt -tc="conv wgrad pipelined*"; build/bin/warpnet trace conv2d_wgrad/05 --size 2,32,14,14,64,3,3,1,1,1
#include <cstdint>

#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"
#include "kernels/common/ptx.hpp"
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/tap_table.hpp"
#include "kernels/conv/wgrad_04_direct_few_channels.cu"  // v4's candidates (it includes v3)
#include "kernels/matmul/09_warptiling.cu"               // sgemm_v9::multiply_stage

namespace conv_wgrad_v05 {
constexpr int kBK = 8;  // pixels per step: 4-float rows keep the float4 reads aligned and the stores conflict-free
}  // namespace conv_wgrad_v05

// x: (N,C,H,W), dy: (N,K,P,Q), NCHW row-major (ConvShape); part: (splits, K,
// C·R·S) row-major, block z writes part[z] = the sum over pixels l in
// [z·slice, (z+1)·slice) ∩ [0, N·P·Q) (one split: part is dw). slice % BK == 0.
// Launch: block ((BM/WM)·(BN/WN)·32); grid (ceil(C·R·S / BM), ceil(K / BN), splits).
// Preconditions: as wgrad v3's (table_fits for Tap, wide_table_fits for WideTap).
template <class TAP, int BM, int BN, int WM, int WN, int WMITER, int WNITER>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 2)
    conv2d_wgrad_pipelined(ConvShape g, int slice, const float* __restrict__ x, const float* __restrict__ dy,
                           float* __restrict__ part) {
  using namespace conv_taps;
  constexpr int BK = conv_wgrad_v05::kBK, TM = 4, TN = 4, PAD = 4;  // matmul v9's thread tiles and row padding
  constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;
  constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER, LANES_N = WSUBN / TN;
  constexpr int ROWS = THREADS / BK;  // tile rows (taps of X, channels of DY) one pass of the block copies
  static_assert((WSUBM / TM) * LANES_N == 32, "a sub-tile is one thread tile per lane");
  static_assert(BM % ROWS == 0 && BN % ROWS == 0 && BM % 32 == 0 && BN % 32 == 0, "whole rows per pass");
  __shared__ TAP s_taps[BM];                           // s_taps[i]: the gather's view of tap crs = m0 + i
  __shared__ __align__(16) float As[2][BK][BM + PAD];  // As[s][ll][mm] = X[m0 + mm][l0 + ll]: (BK, BM), stage s
  __shared__ __align__(16) float Bs[2][BK][BN + PAD];  // Bs[s][ll][nn] = DY[l0 + ll][n0 + nn]: (BK, BN), stage s

  const int CRS = g.crs(), HW = g.H * g.W, PQ = g.P * g.Q, L = g.N * PQ;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int l_begin = blockIdx.z * slice, l_end = min(L, l_begin + slice);
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;  // the warp tile
  const int lm = (lane / LANES_N) * TM, ln = (lane % LANES_N) * TN;    // the thread tile in a sub-tile
  const int ll = t % BK, row = t / BK;  // this thread copies pixel column ll, rows row + i·ROWS of each tile

  for (int i = t; i < BM; i += THREADS) s_taps[i] = x_tap<TAP>(g, m0 + i);  // divided once per tap per block

  // This thread's pixel l = l0 + ll as (n, p, q): divided once, then carried.
  int l = l_begin + ll;
  int n = l / PQ, p = l % PQ / g.Q, q = l % g.Q;
  auto advance = [&] {
    l += BK;
    for (q += BK; q >= g.Q; q -= g.Q)
      if (++p == g.P) p = 0, ++n;
  };
  // The current pixel's column of both tiles into stage st, as one group of copies.
  auto stage = [&](int st) {
    const bool valid = l < l_end;
    const int h0 = p * g.stride - g.pad, w0 = q * g.stride - g.pad;  // its input pixel under tap (0, 0)
    const int64_t x_n = int64_t(n) * g.C * HW + h0 * g.W + w0;      // + a tap's offset: x[n, c, h0 + r·dil, w0 + s·dil]
    const int64_t dy_l = int64_t(n) * g.K * PQ + p * g.Q + q;       // dy[n, 0, p, q]; channel k is k·P·Q further
#pragma unroll
    for (int i = 0; i < BM / ROWS; ++i) {
      const int mm = row + i * ROWS;
      const TAP tap = s_taps[mm];  // one entry for the 8 lanes of a row: a broadcast
      const int ih = h0 + tap_dh(tap), iw = w0 + tap_dw(tap);
      const bool in = valid && unsigned(ih) < unsigned(g.H) && unsigned(iw) < unsigned(g.W);
      ::warpnet::ptx::cp_async_ca<4>(&As[st][ll][mm], in ? x + (x_n + tap_offset(tap)) : x, in ? 4 : 0);
    }
#pragma unroll
    for (int i = 0; i < BN / ROWS; ++i) {
      const int nn = row + i * ROWS, k = n0 + nn;
      const bool in = valid && k < g.K;
      ::warpnet::ptx::cp_async_ca<4>(&Bs[st][ll][nn], in ? dy + (dy_l + int64_t(k) * PQ) : dy, in ? 4 : 0);
    }
    ::warpnet::ptx::cp_async_commit();
  };

  float acc[WMITER * TM][WNITER * TN] = {};  // dW^T rows wm0 + (i/TM)·WSUBM + lm + i%TM, columns likewise, of the tile
  const int steps = l_end > l_begin ? ::warpnet::ceil_div(l_end - l_begin, BK) : 0;
  __syncthreads();  // the tap table is complete before any copy reads it
  if (steps > 0) stage(0);
  for (int step = 0; step < steps; ++step) {
    const int st = step % 2;
    ::warpnet::ptx::cp_async_wait<0>();  // this thread's copies into stage st have landed
    __syncthreads();  // everyone's have, and everyone is done multiplying stage 1 − st
    if (step + 1 < steps) {
      advance();
      stage(1 - st);
    }
    sgemm_v9::multiply_stage<BK, BM + PAD, BN + PAD, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(
        &As[st][0][0], &Bs[st][0][0], wm0 + lm, wn0 + ln, acc);
  }

  // part[z][k][crs]: a thread's TM rows are TM consecutive crs of one k.
  float* out = part + size_t(blockIdx.z) * g.K * CRS;
  const bool vec = CRS % 4 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0;
#pragma unroll
  for (int i = 0; i < WMITER * TM; i += TM) {
    const int crs = m0 + wm0 + (i / TM) * WSUBM + lm;  // rows crs .. crs + 3
    if (crs >= CRS) continue;
#pragma unroll
    for (int j = 0; j < WNITER * TN; ++j) {
      const int k = n0 + wn0 + (j / TN) * WSUBN + ln + j % TN;
      if (k >= g.K) continue;
      float* dst = out + size_t(k) * CRS + crs;
      if (vec) {  // C·R·S % 4 == 0 and crs % 4 == 0: all four rows exist
        ::warpnet::store_float4(dst, make_float4(acc[i][j], acc[i + 1][j], acc[i + 2][j], acc[i + 3][j]));
      } else {
        for (int r = 0; r < TM && crs + r < CRS; ++r) dst[r] = acc[i + r][j];
      }
    }
  }
}

namespace conv_wgrad_v05 {
using namespace conv_taps;

// One pipelined tile: the kernel's parameters (thread tiles 4x4, BK = kBK).
template <int BM_, int BN_, int WM_, int WN_, int WMITER_, int WNITER_>
struct Tiles {
  static constexpr int BM = BM_, BN = BN_, BK = kBK, WM = WM_, WN = WN_, WMITER = WMITER_, WNITER = WNITER_;
  static constexpr int threads = (BM / WM) * (BN / WN) * 32;
  // The packed table where it can describe g, else the unpacked one.
  static constexpr auto kernel(const ConvShape& g) {
    return table_fits(g) ? conv2d_wgrad_pipelined<Tap, BM, BN, WM, WN, WMITER, WNITER>
                         : conv2d_wgrad_pipelined<WideTap, BM, BN, WM, WN, WMITER, WNITER>;
  }
};

// The pipelined tiles, then wgrad v4's candidates (its direct kernel, v3's tiles).
constexpr int kPipelined = 4;
constexpr int kCandidates = kPipelined + conv_wgrad_v04::kCandidates;

// visit.template operator()<T>() for pipelined tile i (0 <= i < kPipelined).
template <class Visit>
auto with_pipelined(int i, Visit&& visit) {
  switch (i) {  //                                         block     warp tile  threads
    case 0: return visit.template operator()<Tiles<128, 128, 64, 32, 2, 2>>();  // 128x128  64x32  256
    case 1: return visit.template operator()<Tiles<128, 128, 64, 64, 2, 4>>();  // 128x128  64x64  128
    case 2: return visit.template operator()<Tiles<128, 64, 64, 32, 2, 2>>();   // 128x64   64x32  128
    default: return visit.template operator()<Tiles<64, 64, 32, 32, 1, 2>>();   // 64x64    32x32  128
  }
}

inline const char* candidate_name(int i) {
  static const char* const names[kPipelined] = {
      "pipelined 128x128x8, warps 64x32", "pipelined 128x128x8, warps 64x64", "pipelined 128x64x8, warps 64x32",
      "pipelined 64x64x8, warps 32x32"};
  return i < kPipelined ? names[i < 0 ? 0 : i] : conv_wgrad_v04::candidate_name(i - kPipelined);
}

// Whether candidate i can run this problem (the pipelined tiles run anything).
inline bool candidate_applies(int i, const ConvShape& g) {
  return i < kPipelined || conv_wgrad_v04::candidate_applies(i - kPipelined, g);
}

// The split of the pixels for pipelined tile i: v3's rule at its tile.
inline conv_wgrad_v03::Split split_of(int i, const ConvShape& g) {
  return with_pipelined(i, [&]<class T>() { return conv_wgrad_v03::split_for<T::BM, T::BN, T::BK>(g); });
}

// The tuning table: v4's direct kernel where it applies; else, among the
// pipelined tiles, v3's rule (the largest within 25% of the fewest padded
// outputs).
inline int table_choice(const ConvShape& g) {
  if (conv_wgrad_v04::applies(g)) return kPipelined;
  return conv_wgrad_v03::fewest_padded_choice(g, kPipelined,
                                              [](int i, auto&& visit) { return with_pipelined(i, visit); });
}

}  // namespace conv_wgrad_v05
