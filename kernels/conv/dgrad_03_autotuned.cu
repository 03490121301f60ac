// Conv dgrad v3 — autotuned: dgrad v2's implicit GEMM with a per-tap table,
// so the gather does no integer division, at one of several tile shapes.
//
// Idea: dgrad v2's header measured, on an H200 at LeNet-5's conv2 (N=64 C=6
//   14x14 K=16 5x5), 3 to 4 us per k-step whatever its depth, and blamed the
//   gather's index arithmetic: every A element split krs into (k, r, s) with
//   divisions by R·S and S (tens of instructions each on a GPU), and every B
//   element split it again. Here the block splits each tap once, into two
//   tables in shared memory (conv v7's device, read the other way):
//     s_taps[i] = {k·P·Q − r·dil·Q − s·dil, r·dil, s·dil}   for krs = chunk0 + i
//     s_wrow[i] = k·C·R·S + r·S + s  (w[k, c, r, s] is w[s_wrow[i] + c·R·S])
//   At stride 1, tap (r,s) takes input pixel (h,w) to output pixel
//   (p, q) = (h + pad − r·dil, w + pad − s·dil): with hp = h + pad, wp = w + pad
//   per thread, one gathered element is one table read (the same entry for
//   the whole warp: a broadcast), two subtractions, two unsigned compares and
//   the load dy_n[hp·Q + wp + offset]. The table holds kTableTaps = 2304 taps
//   (K = 256 at 3x3, issue 5's deepest layer, in one piece); a longer
//   reduction is walked in chunks of that many, the table rebuilt (one
//   barrier) per chunk. The divisions left run once per tap per block and
//   once per thread (its pixel's (n, h, w)).
// Stride > 1 runs dgrad v2's kernel at the same tile (Tiles::kernel
//   below): there a tap reaches a pixel only when h + pad − r·dil is a
//   multiple of the stride, a test and a division per element this table
//   does not remove, and three of four gathered elements are zeros at
//   stride 2. The fix is cuDNN's: split the dgrad into stride² dense
//   convolutions, one per phase of (h, w) — a later version's lesson.
//   LeNet-5 and issue 5's layers are all stride 1.
// Padding without a test per element: a row past M = N·H·W gets hp far
//   below zero (kOutsideRow), a table entry past K·R·S a displacement beyond
//   any image (kNoTap), so the one bounds test on (p, q) covers taps under
//   no output, rows past M and taps past the reduction. Preconditions:
//   H + pad, W + pad <= kNoTap and dil·(R − 1), dil·(S − 1) < kNoTap (the
//   displacements fit 16 bits); where they do not (conv_taps::table_fits), a
//   candidate runs dgrad v2's kernel at its tile instead.
// Tiles: v7's seven candidates (kernels/conv/tap_tiles.hpp), from v2's wide
//   128x64x8 down to v2's narrow 32x8x32, with 64x8x32 for C = 1 .. 8 at
//   large N·H·W; C takes the GEMM's column role here, so the table rule is
//   v7's with C in K's place. On a GPU the registration's Kernel::tune times
//   them all and keeps the fastest; every candidate is checked on the
//   emulator (tests/simt/traced/test_conv_dgrad_autotune.cpp).
// Changed from dgrad v2: the tap tables (no division per gathered A or B
//   element at stride 1); the tile is a choice among kCandidates; v2's
//   kernel is kept for stride > 1. Still single-buffered, scalar loads.
// Trace (emulator, `warpnet trace`, beside dgrad v2 at the same sizes):
//   N=2 C=16 14x14 K=32 3x3 stride 1 pad 1: the table picks 32x16x32, 1x1
//   per thread (13 blocks of 512 threads; none of the 16-wide tiles reaches
//   132 blocks at N=2), where v2 runs 128x64x8, 8x4 (4 blocks of 256).
//   Global bytes asked 6.74e5 (v2: 5.08e5; w is read once per row of tiles,
//   13 against 4; the registry formula 7.16e5); dy gathers 5.32 sectors per
//   request (v2 5.06), w 7.89 (8.22), dx stores 4.31 (4.96); shared accesses
//   1.00-way (the worst request's 2 wavefronts are the 8-byte table
//   accesses, 256 bytes a warp, which the tracer counts as their least); memory instructions per warp 658.7 (v2 3810.2 over
//   6.5x fewer warps: 1.37e5 in all against 1.22e5).
//   LeNet-5's conv2, N=2 C=6 14x14 K=16 5x5 pad 0: both run 32x8x32, 1x1
//   (13 blocks of 256). The same global traffic (4.54e5 bytes; dy 4.66
//   sectors per request, w 5.73, dx 4.31), 1.00-way shared; memory
//   instructions per warp 1016.0 against v2's 947.5 (+7%: the table reads).
//   What the table removes, the divisions per element, is arithmetic, which
//   the emulator's memory trace does not count: only a GPU will say whether
//   it pays.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-run2.json, `warpnet bench conv2d_dgrad`),
//   N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14: 0.699 / 0.722 / 0.748 ms,
//   21.2 / 20.5 / 19.8 TFLOP/s, 36.5% / 29.1% / 24.1% of cuDNN in the same run (its fastest fp32 algorithm by cudnnFind:
//   FFT or Winograd there).
// Run: build/bin/test_simt -tc="conv dgrad autotune*"; build/bin/warpnet trace conv2d_dgrad/03 --size 2,16,14,14,32,3,3,1,1,1
#include <cstdint>

#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/tap_table.hpp"
#include "kernels/conv/tap_tiles.hpp"
#include "kernels/conv/dgrad_02_implicit_gemm.cu"  // the stride > 1 path

namespace conv_dgrad_v03 {

// One tap (k, r, s): its offset is k·P·Q − r·dil·Q − s·dil into one image
// of dy from hp·Q + wp (conv_taps::Tap, shared with conv v7); kOutsideRow is
// the hp of a row past M (p = hp − r·dil is then negative for every tap).
using namespace conv_taps;

}  // namespace conv_dgrad_v03

// dy: (N,K,P,Q), w: (K,C,R,S), dx: (N,C,H,W), NCHW row-major (ConvShape).
// Launch: block ((BM/TM)·(BN/TN)); grid (ceil(N·H·W / BM), ceil(C / BN)).
// Preconditions: stride 1; H + pad, W + pad <= kNoTap; dil·(R−1), dil·(S−1) < kNoTap.
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    conv2d_dgrad_taps(ConvShape g, const float* __restrict__ dy, const float* __restrict__ w,
                      float* __restrict__ dx) {
  using namespace conv_dgrad_v03;  // Tap, its fields and the tables' constants
  constexpr int TAPS = kTableTaps;
  constexpr int LM = BM / TM, LN = BN / TN, THREADS = LM * LN;  // lanes along m and along c
  constexpr int PAD = 32 / BK;  // Bs rows an odd multiple of 32/BK banks apart (v2): conflict-free stores
  static_assert(BM % TM == 0 && BN % TN == 0 && THREADS <= 1024 && THREADS % 32 == 0, "whole warps");
  static_assert(LM % 32 == 0 || 32 % LM == 0, "a warp spans whole rows of lanes along m");
  static_assert(BM >= 32, "a warp's gathers share one tap: one table entry per warp, a broadcast");
  static_assert(THREADS % BM == 0 && BK % (THREADS / BM) == 0, "A tile: whole columns of m per pass");
  static_assert(THREADS % BK == 0 && BN % (THREADS / BK) == 0, "B tile: whole rows of taps per pass");
  static_assert(32 % BK == 0 && BN % PAD == 0 && (BN / PAD) % 2 == 0, "Bs rows an odd number of 32/BK banks apart");
  static_assert(TAPS % BK == 0, "a chunk of the table is whole k-steps");
  __shared__ Tap s_taps[TAPS];        // s_taps[i]: the gather's view of tap krs = chunk0 + i, (TAPS)
  __shared__ int s_wrow[TAPS];        // s_wrow[i]: w[k, 0, r, s]'s index for krs = chunk0 + i, −1 past K·R·S
  __shared__ float As[BK][BM];        // As[kk][mm] = A[m0 + mm][k0 + kk]: (BK, BM) transposed, gathered from dy
  __shared__ float Bs[BK][BN + PAD];  // Bs[kk][nn] = w[k, n0 + nn, r, s] for krs = k0 + kk: (BK, BN)

  const int HW = g.H * g.W, M = g.N * HW, KRS = g.K * g.R * g.S, RS = g.R * g.S, PQ = g.P * g.Q;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int t = threadIdx.x, tm = t % LM, tn = t / LM;

  // The A row this thread gathers (the same at every step): input pixel
  // (n, h, w) of dx, as dy's image n and hp = h + pad, wp = w + pad.
  const int a_mm = t % BM, a_k = t / BM;  // elements (a_k + i·THREADS/BM, a_mm) of As
  const int a_m = m0 + a_mm;
  int a_hp = kOutsideRow, a_wp = 0, a_hwp = 0;  // past M: every bounds test fails
  const float* a_dy = dy;                        // image n of dy, (K,P,Q)
  if (a_m < M) {
    const int hw = a_m % HW;
    a_hp = hw / g.W + g.pad;
    a_wp = hw % g.W + g.pad;
    a_hwp = a_hp * g.Q + a_wp;  // + a tap's offset: dy[n, k, hp − r·dil, wp − s·dil]
    a_dy = dy + size_t(a_m / HW) * g.K * PQ;
  }
  // The B elements: consecutive lanes along the taps (r,s contiguous in w).
  const int b_kk = t % BK, b_nn = t / BK;  // elements (b_kk, b_nn + i·THREADS/BK) of Bs

  float acc[TM][TN] = {};  // dX[m0 + tm + i·LM][n0 + tn + j·LN], in registers
  for (int chunk0 = 0; chunk0 < KRS; chunk0 += TAPS) {
    // This chunk's taps, whole k-steps of them. The previous chunk's last
    // step ended with a barrier, so nobody reads the old entries any more.
    const int taps = min(TAPS, ::warpnet::ceil_div(KRS - chunk0, BK) * BK);
    for (int i = t; i < taps; i += THREADS) {
      const int krs = chunk0 + i;
      Tap tap = make_tap(0, kNoTap, 0);  // past K·R·S: under no output, gathers a zero
      int wrow = -1;
      if (krs < KRS) {
        const int k = krs / RS, rs = krs % RS, dh = rs / g.S * g.dil, dw = rs % g.S * g.dil;  // once per tap per block
        tap = make_tap(k * PQ - dh * g.Q - dw, dh, dw);
        wrow = k * g.C * RS + rs;
      }
      s_taps[i] = tap;
      s_wrow[i] = wrow;
    }
    __syncthreads();  // the tables are complete before any gather reads them

    for (int k0 = chunk0; k0 < chunk0 + taps; k0 += BK) {
      for (int kk = a_k; kk < BK; kk += THREADS / BM) {
        const Tap tap = s_taps[k0 - chunk0 + kk];  // one entry for the whole warp: a broadcast
        const int p = a_hp - tap_dh(tap), q = a_wp - tap_dw(tap);
        float v = 0.0f;  // under no output, past M or past K·R·S: zero
        if (unsigned(p) < unsigned(g.P) && unsigned(q) < unsigned(g.Q)) v = a_dy[a_hwp + tap_offset(tap)];
        As[kk][a_mm] = v;
      }
      const int wrow = s_wrow[k0 - chunk0 + b_kk];  // consecutive entries across the lanes: no conflict
      for (int nn = b_nn; nn < BN; nn += THREADS / BK) {
        const int c = n0 + nn;
        Bs[b_kk][nn] = (wrow >= 0 && c < g.C) ? w[wrow + size_t(c) * RS] : 0.0f;  // w[k, c, r, s]
      }
      __syncthreads();  // the tiles are complete before anyone reads them
#pragma unroll  // the whole step's multiply-adds in a row (matmul v09 says why)
      for (int kk = 0; kk < BK; ++kk) {
        float a[TM], b[TN];
        for (int i = 0; i < TM; ++i) a[i] = As[kk][tm + i * LM];  // LM consecutive floats per half warp or warp
        for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tn + j * LN];  // a broadcast: few tn per warp
        for (int i = 0; i < TM; ++i)
          for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
      }
      __syncthreads();  // everyone is done with the tiles (and the tables) before they are overwritten
    }
  }

  // dX[m][c] is dx[n, c, h, w] = dx[(n·C + c)·H·W + hw]: along m (lanes tm)
  // the stores are consecutive w, coalesced.
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + tm + i * LM;
    if (m >= M) break;
    const int n = m / HW, hw = m % HW;
    for (int j = 0; j < TN; ++j) {
      const int c = n0 + tn + j * LN;
      if (c < g.C) dx[(size_t(n) * g.C + c) * HW + hw] = acc[i][j];
    }
  }
}

namespace conv_dgrad_v03 {

// One candidate: the kernels' tile parameters.
template <int BM_, int BN_, int BK_, int TM_, int TN_>
struct Tiles {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
  static constexpr int threads = (BM / TM) * (BN / TN);
  static constexpr int shared_bytes = (8 + 4) * kTableTaps + 4 * BK * BM + 4 * BK * (BN + 32 / BK);
  static_assert(shared_bytes <= 48 * 1024, "static shared memory: valid on every GPU without opting in");
  // The tap-table kernel at stride 1 where a table can describe g, dgrad
  // v2's otherwise (same arguments, same launch shape).
  static constexpr auto kernel(const ConvShape& g) {
    return g.stride == 1 && table_fits(g) ? conv2d_dgrad_taps<BM, BN, BK, TM, TN>
                                          : conv2d_dgrad_implicit_gemm<BM, BN, BK, TM, TN>;
  }
};

// The candidates: conv_tap_tiles' seven shapes (kernels/conv/tap_tiles.hpp),
// 32.1 to 37.1 KiB of shared memory each here.
using conv_tap_tiles::candidate_name;
using conv_tap_tiles::kCandidates;
template <class Visit>
auto with_candidate(int i, Visit&& visit) {
  return conv_tap_tiles::with_candidate<Tiles>(i, visit);
}
inline int table_choice(const ConvShape& g) { return conv_tap_tiles::table_choice<Tiles>(g.N * g.H * g.W, g.C); }

}  // namespace conv_dgrad_v03
