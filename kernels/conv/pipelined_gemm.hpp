// The pipelined implicit GEMM that conv v9 and dgrad v5 share: matmul v9's
// machinery (two cp.async stages, warp tiles, unrolled k-steps, one barrier
// per step) over a reduction of filter taps read through a table in shared
// memory. A pass (the forward, the data gradient) says what a row, a tap and
// an element are; this file does the rest.
//
//   Out (rows, cols) = A (rows, taps) @ B (taps, cols)
//   rows m = n·plane + pixel (pixels of every image), cols channels;
//   out[(n·cols + col)·plane + pixel] = Out[m][col] (NCHW).
//
// A pass P provides, all __device__ and static:
//   Entry, kTableTaps           a table entry (a tap as the gathers use it), and
//                               how many the table holds (a multiple of BK)
//   taps(g), rows(g), cols(g), plane(g)
//   entry(g, i)                 tap i's entry (its divisions run once per block
//                               and chunk); past taps(g), one that gathers zeros
//   Row, row(g, m, a)           what a thread's A row needs at every step
//   element(g, row, entry, a, in) the A element's address; in: whether it exists
//                               (false in the padding, past the rows, past the taps)
//   stage_b<BK, BN, LD, THREADS>(dst, table, b, g, n0, k0, t)
//                               step k0's (BK, BN) B tile into dst as cp.async
//                               copies, table = the entries of taps k0, k0 + 1, ...
//   hoisted_b<BK, BN, LD, THREADS>(g, n0, t), with HOISTED_B only: an object
//                               whose copy(dst, b, k0) issues what stage_b does,
//                               its addresses worked out before the k-loop
#pragma once
#include <cstdint>

#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"
#include "kernels/common/ptx.hpp"
#include "kernels/conv/conv_shape.hpp"
#include "kernels/matmul/09_warptiling.cu"  // sgemm_v8::stage_tile, sgemm_v9::multiply_stage

// a, b: the pass's A and B sources (x or dy, w); out as above.
// Launch: block ((BM/WM)·(BN/WN)·32); grid (ceil(rows / BM), ceil(cols / BN)).
// Two blocks per SM asked of the register allocator: left alone, ptxas gave
// conv v9's 256-thread tile 139 registers, one block (8 warps) per SM; held
// to 128 it spills 32 bytes, dgrad v5's 44 (sm_90a, nvcc 13.0;
// bench/results/ptxas-sm90a-2026-12-07.txt).
template <class Pass, int BM, int BN, int BK, int WM, int WN, int WMITER, int WNITER, bool HOISTED_B = false>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 2)
    implicit_gemm_pipelined(ConvShape g, const float* __restrict__ a, const float* __restrict__ b,
                            float* __restrict__ out) {
  using Entry = typename Pass::Entry;
  constexpr int TM = 4, TN = 4, PAD = 4;  // matmul v9's thread tiles and row padding
  constexpr int TAPS = Pass::kTableTaps, WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;
  constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER, LANES_N = WSUBN / TN;
  constexpr int A_ROWS = THREADS / BM;  // k rows of the A tile one pass of the block gathers
  static_assert((WSUBM / TM) * LANES_N == 32, "a sub-tile is one thread tile per lane");
  static_assert(THREADS % BM == 0 && BK % A_ROWS == 0, "the A gather: whole k rows per pass");
  static_assert(TAPS % BK == 0, "a chunk of the table is whole k-steps");
  static_assert(sizeof(Entry) * TAPS + 2 * BK * (BM + BN + 2 * PAD) * 4 <= 48 * 1024, "static shared memory");
  __shared__ Entry s_table[TAPS];                      // s_table[i]: tap chunk0 + i, (TAPS) for one chunk
  __shared__ __align__(16) float As[2][BK][BM + PAD];  // As[s][k][m] = A[m0 + m][k0 + k]: (BK, BM), stage s
  __shared__ __align__(16) float Bs[2][BK][BN + PAD];  // Bs[s][k][n] = B[k0 + k][n0 + n]: (BK, BN), stage s

  const int rows = Pass::rows(g), cols = Pass::cols(g), plane = Pass::plane(g);
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;  // the warp tile
  const int lm = (lane / LANES_N) * TM, ln = (lane % LANES_N) * TN;    // the thread tile in a sub-tile
  const int a_mm = t % BM, a_k = t / BM;  // this thread gathers elements (a_k + i·A_ROWS, a_mm) of As
  const typename Pass::Row a_row = Pass::row(g, m0 + a_mm, a);

  // B's copies worked out once per thread (HOISTED_B), else nothing.
  [[maybe_unused]] const auto b_copies = [&] {
    if constexpr (HOISTED_B) return Pass::template hoisted_b<BK, BN, BN + PAD, THREADS>(g, n0, t);
    else return 0;
  }();
  auto build_table = [&](int chunk0) {
    for (int i = t; i < TAPS; i += THREADS) s_table[i] = Pass::entry(g, chunk0 + i);
  };
  // Step k0's tiles into stage st, from the chunk of the table at chunk0.
  auto stage = [&](int st, int k0, int chunk0) {
#pragma unroll
    for (int i = 0; i < BK / A_ROWS; ++i) {
      const int kk = a_k + i * A_ROWS;
      bool in = false;  // one entry for the whole warp: a broadcast
      const float* src = Pass::element(g, a_row, s_table[k0 - chunk0 + kk], a, in);
      ::warpnet::ptx::cp_async_ca<4>(&As[st][kk][a_mm], in ? src : a, in ? 4 : 0);  // zero-filled when !in
    }
    if constexpr (HOISTED_B) b_copies.copy(&Bs[st][0][0], b, k0);
    else Pass::template stage_b<BK, BN, BN + PAD, THREADS>(&Bs[st][0][0], s_table + (k0 - chunk0), b, g, n0, k0, t);
    ::warpnet::ptx::cp_async_commit();  // this step's copies are one group
  };

  float acc[WMITER * TM][WNITER * TN] = {};  // Out rows wm0 + (i/TM)·WSUBM + lm + i%TM, columns likewise, of the tile
  const int steps = ::warpnet::ceil_div(Pass::taps(g), BK);
  int chunk0 = 0;
  build_table(0);
  __syncthreads();  // the first chunk is complete before any gather reads it
  stage(0, 0, 0);
  for (int step = 0; step < steps; ++step) {
    const int st = step % 2, next = (step + 1) * BK;
    ::warpnet::ptx::cp_async_wait<0>();  // this thread's copies into stage st have landed
    __syncthreads();  // everyone's have; everyone is done with stage 1 − st and with the table's reads
    if (step + 1 < steps) {
      if (next >= chunk0 + TAPS) {  // the next step's taps are in the next chunk
        chunk0 += TAPS;
        build_table(chunk0);
        __syncthreads();  // the chunk is complete before the copies below read it
      }
      stage(1 - st, next, chunk0);
    }
    sgemm_v9::multiply_stage<BK, BM + PAD, BN + PAD, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(
        &As[st][0][0], &Bs[st][0][0], wm0 + lm, wn0 + ln, acc);
  }

  // A thread's TM = 4 rows start at a multiple of 4; when the plane is one
  // too they lie in one image, contiguous and 16-byte aligned in out: one
  // float4 per channel, and a warp's 8 lanes along m fill 128 contiguous
  // bytes (scalar stores scattered them over 18 sectors per request in conv
  // v9's trace, 22% efficiency).
  const bool vec = plane % 4 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0;
#pragma unroll
  for (int i = 0; i < WMITER * TM; i += TM) {
    const int m = m0 + wm0 + (i / TM) * WSUBM + lm;  // rows m .. m + 3
    if (m >= rows) continue;
#pragma unroll
    for (int j = 0; j < WNITER * TN; ++j) {
      const int col = n0 + wn0 + (j / TN) * WSUBN + ln + j % TN;
      if (col >= cols) continue;
      if (vec) {  // rows = N·plane is then a multiple of 4 too: all four rows exist
        float* dst = out + (size_t(m / plane) * cols + col) * plane + m % plane;
        ::warpnet::store_float4(dst, make_float4(acc[i][j], acc[i + 1][j], acc[i + 2][j], acc[i + 3][j]));
      } else {
        for (int r = 0; r < TM && m + r < rows; ++r)  // rows may cross into the next image
          out[(size_t((m + r) / plane) * cols + col) * plane + (m + r) % plane] = acc[i + r][j];
      }
    }
  }
}

namespace conv_pipelined {

// One tile of the kernel for pass Pass (thread tiles 4x4, BK 8), and whether
// it hoists B's copies (the pass's hoisted_b).
template <class Pass, int BM_, int BN_, int WM_, int WN_, int WMITER_, int WNITER_, bool HOISTED_B = false>
struct Tiles {
  static constexpr int BM = BM_, BN = BN_, BK = 8, WM = WM_, WN = WN_, WMITER = WMITER_, WNITER = WNITER_;
  static constexpr int threads = (BM / WM) * (BN / WN) * 32;
  static constexpr auto kernel() {
    return implicit_gemm_pipelined<Pass, BM, BN, BK, WM, WN, WMITER, WNITER, HOISTED_B>;
  }
};

// The tiles, for layers with many channels: 128x128 in 8 warps of 64x32
// (matmul v10's C1 cut) or 4 warps of 64x64 (its C2, cuBLAS's), 128x64 in 4
// warps of 64x32, and 256x64 in 8 warps of 64x32: for 64 output channels
// (the 56x56 ResNet layer, where v9 ran at 72.6% of cuDNN's implicit GEMM
// with 128x64 on 2026-12-04), twice the rows per filter tile, a sixth less
// shared-memory traffic per FLOP, 8 warps instead of 4 a block (like the
// other 8-warp tile, held to 128 registers by the two blocks an SM its
// launch bounds ask for, it spills a little: 40 bytes a thread, ptxas, nvcc
// 13, sm_90a; the 128x128 one 32, which the H200's sass summary counted as
// 10 LDL and 8 STL). BK = 8 keeps
// two stages (12.5-20.5 KiB) beside an 18 KiB table in 48 KiB of static
// shared memory (ptxas: 30.5-38.5 KiB in all; bench/results/ptxas-sm90a-2026-12-07.txt).
// Kernel::tune times them all on a GPU; the table's rule takes the
// first that fills the SMs, so a tile added at the end changes no choice
// made without one.
constexpr int kTiles = 4;

// visit.template operator()<T>() for tile i (0 <= i < kTiles) of pass Pass.
template <class Pass, class Visit>
auto with_tile(int i, Visit&& visit) {
  switch (i) {  //                                                  block     warp tile  threads
    case 0: return visit.template operator()<Tiles<Pass, 128, 128, 64, 32, 2, 2>>();  // 128x128  64x32  256
    case 1: return visit.template operator()<Tiles<Pass, 128, 128, 64, 64, 2, 4>>();  // 128x128  64x64  128
    case 2: return visit.template operator()<Tiles<Pass, 128, 64, 64, 32, 2, 2>>();   // 128x64   64x32  128
    default: return visit.template operator()<Tiles<Pass, 256, 64, 64, 32, 2, 2>>();  // 256x64   64x32  256
  }
}

inline const char* tile_name(int i) {
  static const char* const names[kTiles] = {"pipelined 128x128x8, warps 64x32", "pipelined 128x128x8, warps 64x64",
                                            "pipelined 128x64x8, warps 64x32", "pipelined 256x64x8, warps 64x32"};
  return names[i < 0 || i >= kTiles ? kTiles - 1 : i];
}

// The tuning tables' rule for a rows x cols GEMM: the first tile whose grid
// gives every SM of an H200 (132) a block; -1 when none does.
inline int first_filling_tile(int rows, int cols) {
  constexpr int kSMs = 132;
  for (int i = 0; i < kTiles; ++i) {
    const int blocks = with_tile<void>(
        i, [&]<class T>() { return ::warpnet::ceil_div(rows, T::BM) * ::warpnet::ceil_div(cols, T::BN); });
    if (blocks >= kSMs) return i;
  }
  return -1;
}

}  // namespace conv_pipelined
