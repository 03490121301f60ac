// Conv v7 — autotuned: v4's implicit GEMM with a per-tap table, so the
// gather does no integer division, at one of several tile shapes per problem.
//
// Idea: two things made v4 slow on small layers.
//   1. The gather's index arithmetic. For every A element of every k-step v4
//      splits the tap index crs into (c, r, s): three divisions by R·S and S
//      (tens of instructions each on a GPU, which has no integer divider).
//      dgrad v2's measurements on an H200 (LeNet-5's conv2: a step took 3 to
//      4 us whatever its depth) point there. Here the block splits each tap
//      once, into a table in shared memory:
//        s_taps[i] = {c·H·W + r·dil·W + s·dil, r·dil, s·dil}   for crs = chunk0 + i
//      an offset into one image and the tap's displacement for the bounds
//      test. The gather of one element is then one table read (the same
//      entry for the whole warp: a broadcast), two unsigned compares and one
//      load. The table holds kTableTaps = 2304 taps (C = 256 at 3x3, issue
//      5's deepest layer, in one piece; 18 KiB); a longer reduction is walked
//      in chunks of that many taps, the table rebuilt (one barrier) per
//      chunk, so there is one gather and no second path for big C·R·S.
//      The divisions left run once per tap per block (C·R·S / threads per
//      thread) and once per output row (the m -> (n, p, q) split).
//   2. The tile. v4's 128 (pixels) x 64 (output channels) tile wastes most
//      of its columns when K is small (LeNet-5: K = 6 and 16; 58 of 64
//      columns are zeros for conv1) and gives few blocks. Following matmul
//      v10, the kernel is instantiated at several tiles (kernels/conv/tap_tiles.hpp),
//      from v4's shape for big layers down to 32 x 8 (dgrad v2's narrow tile),
//      and the launch picks one:
//        a. by measurement on a GPU: the registration's Kernel::tune
//           (src/device/kernels/conv/07_autotuned.cpp) times every candidate
//           with CUDA events, checks each against a double-precision
//           direct convolution, and caches the fastest per sizes;
//        b. otherwise from the tuning table (conv_v07::table_choice): the
//           narrowest tile whose BN covers K (the widest when none does), and
//           at that width the largest tile giving at least one block per SM
//           of an H200 (132), else the smallest. A starting point, not a
//           measurement; on the emulator it is the only rule.
//   Every candidate is checked against a CPU reference on the emulator at
//   awkward sizes (tests/simt/traced/test_conv_autotune.cpp): the tuner may
//   pick any of them.
// Padding without a test per element: a row past M = N·P·Q gets h0 far below
//   any image (kOutsideRow) and table entries past C·R·S a displacement far
//   beyond it (kNoTap), so one bounds test covers padding taps, rows past M
//   and taps past the reduction, and the zero goes in. Preconditions:
//   H + pad and W + pad at most kNoTap, and dil·(R − 1), dil·(S − 1) below
//   it, so the displacements fit 16 bits; where they do not
//   (conv_taps::table_fits), a candidate runs v4's kernel at its tile instead.
// Changed from v4: the tap table (no division per gathered element); the
//   tile is a choice among kCandidates (v4's shape is candidate 0, which the
//   table picks for issue 5's layers); Bs rows padded by 32/BK floats (dgrad
//   v2's rule, conflict-free stores at every BK). Still single-buffered, FMAs
//   from shared memory, scalar loads.
// Trace (emulator, N=2 C=16 14x14 K=32 3x3 stride 1 pad 1, beside v4; the
//   table picks 64x32x16, 4x2 per thread, 7 blocks, where v4 runs 128x64x8
//   in 4): global bytes asked 3.84e5 (v4: 3.29e5; 7 blocks read all of w
//   where v4's 4 did); x gathers 5.59 sectors per request (v4: 5.08; at pad
//   0 both 5.47: at pad 1 the lanes that skip padding taps shift the
//   tracer's pairing of each lane's k-th load, see v5), w loads 4.00, y
//   stores 4.96 (both as v4); shared loads and stores 1.00-way (no bank
//   conflicts; the table's 8-byte accesses take 2 wavefronts, the fewest
//   for 8 bytes); memory instructions per warp 1012 (v4: 1924; 56 warps
//   against 32, 56.7k against 61.6k in all). The tracer counts memory
//   instructions only, so the divisions saved do not show here; nvcc's PTX
//   for sm_90a has no div or rem between the table's ld.shared.u64 and the
//   gather's ld.global (they remain in the table build, the row setup and
//   the epilogue).
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-cnn.json, `warpnet bench conv2d`),
//   N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14: 0.701 / 0.731 / 0.763 ms,
//   21.1 / 20.2 / 19.4 TFLOP/s, 32.4% / 26.7% / 31.7% of cuDNN (fp32, no TF32) in the same run;
//   the tuner picked 128x64x8 / 128x64x8 / 64x64x16.
// Run: build/bin/test_simt -tc="conv autotune*"; build/bin/warpnet trace conv2d/07 --size 2,16,14,14,32,3,3,1,1,1
#include <cstdint>

#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/tap_table.hpp"
#include "kernels/conv/tap_tiles.hpp"
#include "kernels/conv/04_implicit_gemm.cu"  // the tiles' kernel where a tap table does not fit

namespace conv_v07 {

// One tap (c, r, s): its offset c·H·W + r·dil·W + s·dil locates its input
// pixel in one image (x + n·C·H·W) relative to the pixel under tap (0, 0)
// (conv_taps::Tap, shared with dgrad v3); kOutsideRow is the h0 of a row
// past M, below any image even after the largest displacement.
using namespace conv_taps;

}  // namespace conv_v07

// x: (N,C,H,W), w: (K,C,R,S), y: (N,K,P,Q), NCHW row-major (ConvShape).
// Launch: block ((BM/TM)·(BN/TN)); grid (ceil(N·P·Q / BM), ceil(K / BN)).
// Preconditions: H + pad, W + pad <= kNoTap; dil·(R−1), dil·(S−1) < kNoTap.
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    conv2d_implicit_gemm_taps(ConvShape g, const float* __restrict__ x, const float* __restrict__ w,
                              float* __restrict__ y) {
  using namespace conv_v07;  // Tap, its fields and the table's constants
  constexpr int TAPS = kTableTaps;
  constexpr int LM = BM / TM, LN = BN / TN, THREADS = LM * LN;  // lanes along m and along k
  // Bs rows 32/BK banks apart, an odd multiple of it in all (dgrad v2): a
  // warp's B stores (BK taps x 32/BK channels) then hit 32 different banks.
  constexpr int PAD = 32 / BK;
  static_assert(BM % TM == 0 && BN % TN == 0 && THREADS <= 1024 && THREADS % 32 == 0, "whole warps");
  static_assert(LM % 32 == 0 || 32 % LM == 0, "a warp spans whole rows of lanes along m");
  static_assert(BM >= 32, "a warp's gathers share one tap: one table entry per warp, a broadcast");
  static_assert(THREADS % BM == 0 && BK % (THREADS / BM) == 0, "A tile: whole columns of m per pass");
  static_assert(THREADS % BK == 0 && BN % (THREADS / BK) == 0, "B tile: whole rows of crs per pass");
  static_assert(32 % BK == 0 && BN % PAD == 0 && (BN / PAD) % 2 == 0, "Bs rows an odd number of 32/BK banks apart");
  static_assert(TAPS % BK == 0, "a chunk of the table is whole k-steps");
  __shared__ Tap s_taps[TAPS];        // s_taps[i]: tap crs = chunk0 + i, (TAPS) for one chunk
  __shared__ float As[BK][BM];        // As[kk][mm] = A[m0 + mm][k0 + kk]: (BK, BM) transposed, gathered A tile
  __shared__ float Bs[BK][BN + PAD];  // Bs[kk][nn] = w[n0 + nn][k0 + kk]: (BK, BN) B tile

  const int M = g.gemm_m(), CRS = g.crs(), PQ = g.P * g.Q;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int t = threadIdx.x, tm = t % LM, tn = t / LM;

  // The A row this thread gathers (the same at every k-step): output pixel
  // (n,p,q) of y, as its image, the input pixel (h0, w0) under tap (0,0) and
  // that pixel's index h0·W + w0 in the image (negative in the padding):
  // forward_row, tap_table.hpp.
  const int a_mm = t % BM, a_k = t / BM;  // elements (a_k + i·THREADS/BM, a_mm) of As
  const ForwardRow a_row = forward_row(g, m0 + a_mm, x);
  // The B elements: consecutive lanes along crs (contiguous in w).
  const int b_kk = t % BK, b_nn = t / BK;  // elements (b_kk, b_nn + i·THREADS/BK) of Bs

  float acc[TM][TN] = {};  // Y[m0 + tm + i·LM][n0 + tn + j·LN], in registers
  for (int chunk0 = 0; chunk0 < CRS; chunk0 += TAPS) {
    // This chunk's taps, whole k-steps of them. The previous chunk's last
    // step ended with a barrier, so nobody reads the old entries any more.
    const int taps = min(TAPS, ::warpnet::ceil_div(CRS - chunk0, BK) * BK);
    for (int i = t; i < taps; i += THREADS) s_taps[i] = x_tap<Tap>(g, chunk0 + i);  // divided once per tap per block
    __syncthreads();  // the table is complete before any gather reads it

    for (int k0 = chunk0; k0 < chunk0 + taps; k0 += BK) {
      for (int kk = a_k; kk < BK; kk += THREADS / BM) {
        const Tap tap = s_taps[k0 - chunk0 + kk];  // one entry for the whole warp: a broadcast
        const int ih = a_row.h0 + tap_dh(tap), iw = a_row.w0 + tap_dw(tap);
        float v = 0.0f;  // in the padding, past M or past C·R·S: zero
        if (unsigned(ih) < unsigned(g.H) && unsigned(iw) < unsigned(g.W)) v = a_row.image[a_row.hw0 + tap_offset(tap)];
        As[kk][a_mm] = v;
      }
      for (int nn = b_nn; nn < BN; nn += THREADS / BK) {
        const int k = n0 + nn, crs = k0 + b_kk;
        Bs[b_kk][nn] = (k < g.K && crs < CRS) ? w[size_t(k) * CRS + crs] : 0.0f;
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
      __syncthreads();  // everyone is done with the tiles (and the table) before they are overwritten
    }
  }

  // Y[m][k] is y[n, k, p, q] = y[(n·K + k)·P·Q + pq]: along m (lanes tm) the
  // stores are consecutive q, coalesced.
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + tm + i * LM;
    if (m >= M) break;
    const int n = m / PQ, pq = m % PQ;
    for (int j = 0; j < TN; ++j) {
      const int k = n0 + tn + j * LN;
      if (k < g.K) y[(size_t(n) * g.K + k) * PQ + pq] = acc[i][j];
    }
  }
}

namespace conv_v07 {

// One candidate: the kernel's tile parameters.
template <int BM_, int BN_, int BK_, int TM_, int TN_>
struct Tiles {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
  static constexpr int threads = (BM / TM) * (BN / TN);
  static constexpr int shared_bytes = 8 * kTableTaps + 4 * BK * BM + 4 * BK * (BN + 32 / BK);
  static_assert(shared_bytes <= 48 * 1024, "static shared memory: valid on every GPU without opting in");
  // The tap-table kernel, or v4's (same tiles, arguments and launch, no
  // table) where the table's 16-bit displacements cannot describe g.
  static constexpr auto kernel(const ConvShape& g) {
    return table_fits(g) ? conv2d_implicit_gemm_taps<BM, BN, BK, TM, TN> : conv2d_implicit_gemm<BM, BN, BK, TM, TN>;
  }
};

// The candidates: conv_tap_tiles' seven shapes (kernels/conv/tap_tiles.hpp),
// 23.1 to 28.1 KiB of shared memory each here.
using conv_tap_tiles::candidate_name;
using conv_tap_tiles::kCandidates;
template <class Visit>
auto with_candidate(int i, Visit&& visit) {
  return conv_tap_tiles::with_candidate<Tiles>(i, visit);
}
inline int table_choice(const ConvShape& g) { return conv_tap_tiles::table_choice<Tiles>(g.gemm_m(), g.K); }

}  // namespace conv_v07
