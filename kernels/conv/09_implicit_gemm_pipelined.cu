// Conv v9 — the implicit GEMM on matmul v9's machinery: cp.async double
// buffering, warp tiles, the k-steps unrolled; v8's kernels remain for the
// layers it does not fit.
//
// Idea: v4 and v7 gather A (the virtual im2col matrix) through registers,
//   with two barriers per k-step and nothing in flight while the tile is
//   multiplied — matmul v5's pattern, which matmul left behind at v8. Here
//   the gather is a 4-byte cp.async per element straight into the k-major
//   A tile, zero-filled (src-size 0) where the tap falls in the padding, past
//   M or past C·R·S: no branch around a copy, no register round trip. The
//   filters, w (K, C·R·S) row-major, are op(B) of matmul's "B transposed"
//   layout and go through matmul v8's stage_tile (4-byte copies landing
//   transposed, 32 banks per warp). Two stages: the copies of step k+1 fly
//   while step k is multiplied by matmul v9's warp tiles (multiply_stage:
//   float4 reads of both tiles, the BK k-steps unrolled), one barrier per
//   step. The tap of each gathered element comes from v7's table in shared
//   memory (one broadcast read, two adds, two unsigned compares), rebuilt
//   per chunk of kTableTaps taps, with one more barrier, for reductions
//   longer than a chunk.
// Tiles: three, for layers with many output channels (issue 5's 3x3 ResNet
//   layers: K = 64 to 256, N·P·Q = 12,544 to 200,704): 128x128 in 8 warps of
//   64x32 (matmul v10's C1 cut) or 4 warps of 64x64 (its C2, cuBLAS's), and
//   128x64 in 4 warps of 64x32; BK = 8 keeps two stages (17 KiB) and an
//   18 KiB table in 48 KiB of static shared memory. v8's candidates — its
//   direct kernel for K <= 16 and v7's seven tiles — follow them, and on a
//   GPU Kernel::tune times every one that applies.
// The table's rule (no GPU): v8's direct kernel where it applies; else the
//   first pipelined tile that gives every SM of an H200 a block (128x128 in
//   8 warps at all three ResNet layers); else v8's table.
// Changed from v7: cp.async gathers into two stages instead of register
//   gathers into one; matmul v9's warp-tiled, unrolled multiply instead of
//   v7's scalar-read thread tiles; BK 8 with padded k-major rows for both
//   tiles.
// Trace (emulator, `warpnet trace conv2d/09 --size 2,8,98,98,32,3,3,1,1,1` and
//   conv2d/07; the smallest layer here where the table takes a pipelined tile,
//   151 blocks of 128x128 in 8 warps, against v7's 301 of 64x32x16): memory
//   instructions 1208 warps x 454 against 2408 x 568 (2.5x fewer in all);
//   shared loads 391,392 against 1,204,000 (float4s, 1.00-way); global bytes
//   asked 9.3e6 against 1.07e7; y stored as float4s, 88.9% efficient.
// Measured: not yet on a GPU (written 2026-12-01 on a machine without one).
// Run: build/bin/test_simt -tc="conv pipelined*"; build/bin/warpnet trace conv2d/09 --size 2,32,14,14,64,3,3,1,1,1
#include <cstdint>

#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/ptx.hpp"
#include "kernels/conv/08_direct_few_channels.cu"  // v8's candidates (it includes v7)
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/tap_table.hpp"
#include "kernels/matmul/09_warptiling.cu"  // sgemm_v8::stage_tile, sgemm_v9::multiply_stage

namespace conv_v09 {
using namespace conv_taps;  // Tap, its fields and the table's constants
}  // namespace conv_v09

// x: (N,C,H,W), w: (K,C,R,S), y: (N,K,P,Q), NCHW row-major (ConvShape).
// The GEMM: Y (N·P·Q, K) = A (N·P·Q, C·R·S) @ w^T, A gathered from x.
// Launch: block ((BM/WM)·(BN/WN)·32); grid (ceil(N·P·Q / BM), ceil(K / BN)).
// Preconditions: H + pad, W + pad <= kNoTap; dil·(R−1), dil·(S−1) < kNoTap.
// Two blocks per SM asked of the register allocator: left alone, ptxas gave
// the 256-thread tile 139 registers, one block (8 warps) per SM; held to 128
// it spills 32 bytes (sm_90, nvcc 13.0). The 128-thread tiles: 167 and 217.
template <int BM, int BN, int BK, int WM, int WN, int WMITER, int WNITER>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 2)
    conv2d_implicit_gemm_pipelined(ConvShape g, const float* __restrict__ x, const float* __restrict__ w,
                                   float* __restrict__ y) {
  using namespace conv_v09;
  constexpr int TM = 4, TN = 4, PAD = 4;  // matmul v9's thread tiles and row padding
  constexpr int TAPS = kTableTaps, WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;
  constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER, LANES_N = WSUBN / TN;
  constexpr int A_ROWS = THREADS / BM;  // k rows of the A tile one pass of the block gathers
  static_assert((WSUBM / TM) * LANES_N == 32, "a sub-tile is one thread tile per lane");
  static_assert(THREADS % BM == 0 && BK % A_ROWS == 0, "the A gather: whole k rows per pass");
  static_assert(TAPS % BK == 0, "a chunk of the table is whole k-steps");
  static_assert(8 * TAPS + 2 * BK * (BM + BN + 2 * PAD) * 4 <= 48 * 1024, "static shared memory");
  __shared__ Tap s_taps[TAPS];                         // s_taps[i]: tap crs = chunk0 + i, (TAPS) for one chunk
  __shared__ __align__(16) float As[2][BK][BM + PAD];  // As[s][k][m] = A[m0 + m][k0 + k]: (BK, BM), stage s
  __shared__ __align__(16) float Bs[2][BK][BN + PAD];  // Bs[s][k][n] = w[n0 + n][k0 + k]: (BK, BN), stage s

  const int M = g.gemm_m(), CRS = g.crs(), RS = g.R * g.S, PQ = g.P * g.Q, HW = g.H * g.W;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;     // the warp tile
  const int lm = (lane / LANES_N) * TM, ln = (lane % LANES_N) * TN;       // the thread tile in a sub-tile

  // The A row this thread gathers at every step: output pixel m = (n, p, q)
  // as its image and the input pixel (h0, w0) under tap (0, 0) (forward_row, tap_table.hpp).
  const int a_mm = t % BM, a_k = t / BM;  // elements (a_k + i·A_ROWS, a_mm) of As
  const ForwardRow a_row = forward_row(g, m0 + a_mm, x);

  // Taps chunk0 .. chunk0 + TAPS − 1 into the table (past C·R·S: no tap, a zero).
  auto build_table = [&](int chunk0) {
    for (int i = t; i < TAPS; i += THREADS) {
      const int crs = chunk0 + i;
      Tap tap = make_tap(0, kNoTap, 0);
      if (crs < CRS) {
        const int c = crs / RS, r = (crs % RS) / g.S, s = crs % g.S;  // once per tap per block and chunk
        tap = make_tap(c * HW + r * g.dil * g.W + s * g.dil, r * g.dil, s * g.dil);
      }
      s_taps[i] = tap;
    }
  };
  // Step k0's tiles into stage st: the gather from the table's chunk at chunk0, w through stage_tile.
  auto stage = [&](int st, int k0, int chunk0) {
#pragma unroll
    for (int i = 0; i < BK / A_ROWS; ++i) {
      const int kk = a_k + i * A_ROWS;
      const Tap tap = s_taps[k0 - chunk0 + kk];  // one entry for the whole warp: a broadcast
      const int ih = a_row.h0 + tap_dh(tap), iw = a_row.w0 + tap_dw(tap);
      const bool in = unsigned(ih) < unsigned(g.H) && unsigned(iw) < unsigned(g.W);
      warpnet::ptx::cp_async_ca<4>(&As[st][kk][a_mm], in ? a_row.image + a_row.hw0 + tap_offset(tap) : x, in ? 4 : 0);
    }
    sgemm_v8::stage_tile<BK, BN, BN + PAD, THREADS, false>(&Bs[st][0][0], w, n0, k0, g.K, CRS, t, false);
    warpnet::ptx::cp_async_commit();  // this step's copies are one group
  };

  float acc[WMITER * TM][WNITER * TN] = {};  // Y rows wm0 + (i/TM)·WSUBM + lm + i%TM, columns likewise, of the tile
  const int steps = ::warpnet::ceil_div(CRS, BK);
  int chunk0 = 0;
  build_table(0);
  __syncthreads();  // the first chunk is complete before any gather reads it
  stage(0, 0, 0);
  for (int step = 0; step < steps; ++step) {
    const int st = step % 2, next = (step + 1) * BK;
    warpnet::ptx::cp_async_wait<0>();  // this thread's copies into stage st have landed
    __syncthreads();  // everyone's have; everyone is done with stage 1 − st and with the table's reads
    if (step + 1 < steps) {
      if (next >= chunk0 + TAPS) {  // the next step's taps are in the next chunk
        chunk0 += TAPS;
        build_table(chunk0);
        __syncthreads();  // the chunk is complete before the gather below reads it
      }
      stage(1 - st, next, chunk0);
    }
    sgemm_v9::multiply_stage<BK, BM + PAD, BN + PAD, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(
        &As[st][0][0], &Bs[st][0][0], wm0 + lm, wn0 + ln, acc);
  }

  // Y[m][k] is y[n, k, p, q] = y[(n·K + k)·P·Q + pq]. A thread's TM = 4
  // rows start at a multiple of 4; when P·Q is one too they lie in one image,
  // contiguous and 16-byte aligned in y: one float4 per channel, and a warp's
  // 8 lanes along m fill 128 contiguous bytes (scalar stores scattered them
  // over 18 sectors per request in the trace, 22% efficiency).
  const bool vec = PQ % 4 == 0 && reinterpret_cast<uintptr_t>(y) % 16 == 0;
#pragma unroll
  for (int i = 0; i < WMITER * TM; i += TM) {
    const int m = m0 + wm0 + (i / TM) * WSUBM + lm;  // rows m .. m + 3
    if (m >= M) continue;
    const int n = m / PQ, pq = m % PQ;
#pragma unroll
    for (int j = 0; j < WNITER * TN; ++j) {
      const int k = n0 + wn0 + (j / TN) * WSUBN + ln + j % TN;
      if (k >= g.K) continue;
      float* out = y + (size_t(n) * g.K + k) * PQ + pq;
      if (vec) {  // M = N·P·Q is then a multiple of 4 too: all four rows exist
        ::warpnet::store_float4(out, make_float4(acc[i][j], acc[i + 1][j], acc[i + 2][j], acc[i + 3][j]));
      } else {
        for (int r = 0; r < TM && m + r < M; ++r) {  // rows may cross into the next image
          const int nr = (m + r) / PQ, pqr = (m + r) % PQ;
          y[(size_t(nr) * g.K + k) * PQ + pqr] = acc[i + r][j];
        }
      }
    }
  }
}

namespace conv_v09 {

// One pipelined tile: the kernel's parameters (thread tiles 4x4, BK 8).
template <int BM_, int BN_, int WM_, int WN_, int WMITER_, int WNITER_>
struct Tiles {
  static constexpr int BM = BM_, BN = BN_, BK = 8, WM = WM_, WN = WN_, WMITER = WMITER_, WNITER = WNITER_;
  static constexpr int threads = (BM / WM) * (BN / WN) * 32;
  static constexpr auto kernel() { return conv2d_implicit_gemm_pipelined<BM, BN, BK, WM, WN, WMITER, WNITER>; }
};

// The pipelined tiles, then v8's candidates (its direct kernel, v7's tiles).
constexpr int kPipelined = 3;
constexpr int kCandidates = kPipelined + conv_v08::kCandidates;

// visit.template operator()<T>() for pipelined tile i (0 <= i < kPipelined).
template <class Visit>
auto with_pipelined(int i, Visit&& visit) {
  switch (i) {  //                                            block     warp tile  sub-tiles  threads
    case 0: return visit.template operator()<Tiles<128, 128, 64, 32, 2, 2>>();  // 128x128  64x32  32x16  256
    case 1: return visit.template operator()<Tiles<128, 128, 64, 64, 2, 4>>();  // 128x128  64x64  32x16  128
    default: return visit.template operator()<Tiles<128, 64, 64, 32, 2, 2>>();  // 128x64   64x32  32x16  128
  }
}

inline const char* candidate_name(int i) {
  static const char* const pipelined[kPipelined] = {"pipelined 128x128x8, warps 64x32",
                                                    "pipelined 128x128x8, warps 64x64",
                                                    "pipelined 128x64x8, warps 64x32"};
  return i < kPipelined ? pipelined[i < 0 ? 0 : i] : conv_v08::candidate_name(i - kPipelined);
}

// Whether candidate i can run this problem (the pipelined tiles and v7's run anything).
inline bool candidate_applies(int i, const ConvShape& g) {
  return i < kPipelined || conv_v08::candidate_applies(i - kPipelined, g);
}

// The tuning table: v8's direct kernel where it applies; else the first
// pipelined tile giving at least one block per SM of an H200; else v8's table.
inline int table_choice(const ConvShape& g) {
  if (conv_v08::candidate_applies(0, g)) return kPipelined;
  for (int i = 0; i < kPipelined; ++i) {
    const int blocks = with_pipelined(
        i, [&]<class T>() { return ::warpnet::ceil_div(g.gemm_m(), T::BM) * ::warpnet::ceil_div(g.K, T::BN); });
    if (blocks >= conv_tap_tiles::kSMs) return i;
  }
  return kPipelined + conv_v08::table_choice(g);
}

}  // namespace conv_v09
