// Conv wgrad v3 — autotuned: wgrad v2's split implicit GEMM with a per-tap
// table, so the gather does no integer division, at one of several tile
// shapes, the GEMM turned so that small layers fill their tiles.
//
// Idea: v2 tiles dW (K, C·R·S) in 64 (k) x 64 (c,r,s) blocks, sized for
//   ResNet's layers. LeNet-5's are tiny in both: conv1's dW is 6 x 25 (150
//   of a tile's 4,096 outputs do work, 4%) and conv2's 16 x 150 (three
//   tiles, 20% used). On an H200 at batch 64 (Nsight Compute, 2026-11-30,
//   bench/results/logs/) v2 took 27 and 26.5 us for the two, plus 11 and 4.5
//   us for the ordered sums — about a tenth of the step. And every gathered
//   x element split its column crs into (c, r, s) with two divisions by R·S
//   and S, tens of instructions each on a GPU.
// The GEMM, turned: rows m = crs (BM, the long side of a small layer's dW),
//   columns n = k (BN), the reduction over the N·P·Q output pixels l:
//     dW^T (C·R·S, K) = X (C·R·S, L) @ DY (L, K)
//     X[crs][l] = x[n, c, p·stride − pad + r·dil, q·stride − pad + s·dil]   (0 in the padding)
//     DY[l][k]  = dy[n, k, p, q]                                         (l = (n,p,q))
//   stored into dw[k, crs] with the lanes along crs: consecutive addresses.
// The tap table: a block's BM rows are BM taps, split once into s_taps (conv
//   v7's packed Tap, kernels/conv/tap_table.hpp):
//     s_taps[i] = {c·H·W + r·dil·W + s·dil, r·dil, s·dil}   for crs = m0 + i
//   and each thread splits its pixel l into (n, h0, w0) = (n, p·stride −
//   pad, q·stride − pad) once per step. One gathered element is then one
//   table read (a broadcast: the lanes of a row share it), two additions,
//   two unsigned compares and the load x_n[h0·W + w0 + offset]. A row past
//   C·R·S gets a displacement beyond any image (kNoTap), a pixel past the
//   slice a row far above it (kOutsideRow): the one bounds test covers
//   padding, rows past the reduction and pixels past the slice. Any stride
//   and dilation: they enter only (h0, w0) and the table.
//   Preconditions (checked by the registration): H + pad, W + pad <= kNoTap
//   and dil·(R − 1), dil·(S − 1) < kNoTap; past them (a long 1-D signal as
//   an H x 1 image, say) the same kernel with the tap unpacked (TAP =
//   WideTap, tap_table.hpp: 16 bytes a tap instead of 8, each coordinate up
//   to 2^29), since no table-free kernel shares these tiles.
// Split as v2 (deterministic): block (tile, z) sums slice z of the pixels,
//   a whole number of steps, into part[z]; sum_splits (kernels/common) adds
//   the partials in a fixed order. Splits are chosen per tile so that
//   tiles·splits is about 264 blocks (two per SM of an H200), never slices
//   under 4 steps (split_of below).
// Tiles: conv v7's seven candidates (kernels/conv/tap_tiles.hpp), BM along
//   crs, BN along k. On a GPU Kernel::tune times them all and keeps the
//   fastest; without one the table (table_choice below) takes the largest
//   tile that wastes few outputs: at LeNet-5's conv1 32x8 (one tile, 150 of
//   256 outputs used), at conv2 64x16 (3 tiles, 78%).
// Changed from wgrad v2: the GEMM turned (taps as rows); the tap table (no
//   division per gathered element); the tile a choice among kCandidates, the
//   splits following the tile. Still single-buffered, scalar loads.
// Trace (emulator, `warpnet trace`, beside wgrad v2 at the same sizes):
//   LeNet-5's conv1 at N=2 (C=1 28x28 K=6 5x5 pad 2): 32x8x32 in 10 splits
//   (v2: 64x64 in 13); global bytes asked 1.94e5 (v2 1.98e5), loads 4.55
//   sectors per request (5.15), partial-tile stores 4.00 (4.87); memory
//   instructions per warp 377 (1040). The multiply-adds the emulator does
//   not count: 256 per pixel and block (v2 4,096), 150 of them useful.
//   conv2 at N=2 (C=6 14x14 K=16 5x5): 64x16x32, one split (v2: 64x64 in
//   2, and the sum): 1.68e5 bytes (2.06e5), 766 memory instructions per warp
//   (988); shared accesses 1.00-way in both.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-run2.json, `warpnet bench conv2d_wgrad`),
//   N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14: 1.228 / 1.107 / 1.062 ms,
//   12.1 / 13.4 / 13.9 TFLOP/s, 43.1% / 22.9% / 18.7% of cuDNN in the same run (its fastest fp32 algorithm by cudnnFind:
//   FFT or Winograd there).
// Run: build/bin/test_simt -tc="conv wgrad autotune*"; build/bin/warpnet trace conv2d_wgrad/03 --size 2,6,14,14,16,5,5,1,0,1
#include <cstdint>

#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/tap_table.hpp"
#include "kernels/conv/tap_tiles.hpp"

namespace conv_wgrad_v03 {
using namespace conv_taps;  // Tap, its fields and the tables' constants
}  // namespace conv_wgrad_v03

// x: (N,C,H,W), dy: (N,K,P,Q), NCHW row-major (ConvShape); part: (splits, K,
// C·R·S) row-major, block z writes part[z] = the sum over pixels l in
// [z·slice, (z+1)·slice) ∩ [0, N·P·Q) (one split: part is dw). slice % BK == 0.
// Launch: block ((BM/TM)·(BN/TN)); grid (ceil(C·R·S / BM), ceil(K / BN), splits).
// Preconditions: with TAP = Tap, H + pad, W + pad <= kNoTap and dil·(R−1),
// dil·(S−1) < kNoTap (table_fits); with WideTap, each at most kMostWide
// (wide_table_fits).
template <class TAP, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    conv2d_wgrad_taps(ConvShape g, int slice, const float* __restrict__ x, const float* __restrict__ dy,
                      float* __restrict__ part) {
  using namespace conv_wgrad_v03;
  constexpr int LM = BM / TM, LN = BN / TN, THREADS = LM * LN;  // lanes along crs and along k
  constexpr int ROWS = THREADS / BK;  // tile rows (taps of X, channels of DY) loaded per pass
  constexpr int PAD = 32 / BK;        // rows an odd multiple of 32/BK banks apart: conflict-free stores
  static_assert(BM % TM == 0 && BN % TN == 0 && THREADS <= 1024 && THREADS % 32 == 0, "whole warps");
  static_assert(THREADS % BK == 0 && BM % ROWS == 0 && BN % ROWS == 0, "the tiles: whole rows per pass");
  static_assert(32 % BK == 0 && BM % PAD == 0 && (BM / PAD) % 2 == 0 && BN % PAD == 0 && (BN / PAD) % 2 == 0,
                "tile rows an odd number of 32/BK banks apart");
  __shared__ TAP s_taps[BM];          // s_taps[i]: the gather's view of tap crs = m0 + i
  __shared__ float As[BK][BM + PAD];  // As[ll][mm] = X[m0 + mm][l0 + ll]: (BK, BM), gathered from x
  __shared__ float Bs[BK][BN + PAD];  // Bs[ll][nn] = DY[l0 + ll][n0 + nn]: (BK, BN)

  const int CRS = g.crs(), HW = g.H * g.W, PQ = g.P * g.Q, L = g.N * PQ;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int l_begin = blockIdx.z * slice, l_end = min(L, l_begin + slice);
  const int t = threadIdx.x, tm = t % LM, tn = t / LM;
  const int ll = t % BK, row = t / BK;  // this thread loads column ll, rows row + i·ROWS of each tile

  for (int i = t; i < BM; i += THREADS) s_taps[i] = x_tap<TAP>(g, m0 + i);  // divided once per tap per block
  __syncthreads();  // the table is complete before any gather reads it

  float acc[TM][TN] = {};  // dW^T[m0 + tm + i·LM][n0 + tn + j·LN], in registers
  for (int l0 = l_begin; l0 < l_end; l0 += BK) {
    // This thread's pixel for the step, split once: image n, (p, q) as the
    // input pixel (h0, w0) under tap (0, 0).
    const int l = l0 + ll;
    const bool l_valid = l < l_end;
    const int n = l_valid ? l / PQ : 0, pq = l_valid ? l % PQ : 0;
    const int h0 = l_valid ? pq / g.Q * g.stride - g.pad : kOutsideRow, w0 = pq % g.Q * g.stride - g.pad;
    const int hw0 = l_valid ? h0 * g.W + w0 : 0;   // + a tap's offset: x[n, c, h0 + r·dil, w0 + s·dil]
    const float* x_n = x + size_t(n) * g.C * HW;   // image n, (C,H,W)
    const float* dy_l = dy + size_t(n) * g.K * PQ + pq;  // dy[n, 0, p, q]; channel k is k·P·Q further
    for (int i = 0; i < BM / ROWS; ++i) {
      const int mm = row + i * ROWS;
      const TAP tap = s_taps[mm];  // one entry for the lanes of a row: a broadcast
      const int ih = h0 + tap_dh(tap), iw = w0 + tap_dw(tap);
      As[ll][mm] = unsigned(ih) < unsigned(g.H) && unsigned(iw) < unsigned(g.W) ? x_n[hw0 + tap_offset(tap)] : 0.0f;
    }
    for (int i = 0; i < BN / ROWS; ++i) {
      const int nn = row + i * ROWS, k = n0 + nn;
      Bs[ll][nn] = l_valid && k < g.K ? dy_l[size_t(k) * PQ] : 0.0f;
    }
    __syncthreads();  // the tiles are complete before anyone reads them
#pragma unroll  // the whole step's multiply-adds in a row (matmul v09 says why)
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
      for (int i = 0; i < TM; ++i) a[i] = As[kk][tm + i * LM];  // consecutive floats along the lanes
      for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tn + j * LN];  // a broadcast: few tn per warp
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }

  // part[z][k][crs]: along the lanes (tm) consecutive crs, coalesced.
  float* out = part + size_t(blockIdx.z) * g.K * CRS;
  for (int j = 0; j < TN; ++j) {
    const int k = n0 + tn + j * LN;
    if (k >= g.K) break;
    for (int i = 0; i < TM; ++i) {
      const int crs = m0 + tm + i * LM;
      if (crs < CRS) out[size_t(k) * CRS + crs] = acc[i][j];
    }
  }
}

namespace conv_wgrad_v03 {

// One candidate: the kernel's tile parameters.
template <int BM_, int BN_, int BK_, int TM_, int TN_>
struct Tiles {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
  static constexpr int threads = (BM / TM) * (BN / TN);
  // The packed table where it can describe g, else the unpacked one.
  static constexpr auto kernel(const ConvShape& g) {
    return table_fits(g) ? conv2d_wgrad_taps<Tap, BM, BN, BK, TM, TN> : conv2d_wgrad_taps<WideTap, BM, BN, BK, TM, TN>;
  }
};

// The candidates: conv_tap_tiles' seven shapes (kernels/conv/tap_tiles.hpp).
using conv_tap_tiles::candidate_name;
using conv_tap_tiles::kCandidates;
template <class Visit>
auto with_candidate(int i, Visit&& visit) {
  return conv_tap_tiles::with_candidate<Tiles>(i, visit);
}

// The split of the pixels among blocks for candidate i: enough blocks to
// fill the GPU (two per SM of an H200, 132 SMs), never a slice under 4
// steps, which would make the partial tiles' traffic rival the slice's own
// loads. From the sizes alone, so a problem is always summed the same way.
struct Split {
  int splits, slice;  // slice: pixels per split, a multiple of the candidate's BK
};
constexpr int kTargetBlocks = 264, kMinSteps = 4;
// The split for a BM x BN tile stepping BK pixels (wgrad v5's tiles too).
template <int BM, int BN, int BK>
Split split_for(const ConvShape& g) {
  const int L = g.N * g.P * g.Q > 0 ? g.N * g.P * g.Q : 1;
  const int tiles = ::warpnet::ceil_div(g.crs(), BM) * ::warpnet::ceil_div(g.K, BN);
  const int most = L / (kMinSteps * BK) > 1 ? L / (kMinSteps * BK) : 1;  // slices of >= 4 steps
  const int want = ::warpnet::ceil_div(kTargetBlocks, tiles) < most ? ::warpnet::ceil_div(kTargetBlocks, tiles) : most;
  const int slice = ::warpnet::ceil_div(::warpnet::ceil_div(L, want), BK) * BK;
  return Split{::warpnet::ceil_div(L, slice), slice};  // no empty slices
}
inline Split split_of(int i, const ConvShape& g) {
  return with_candidate(i, [&]<class T>() { return split_for<T::BM, T::BN, T::BK>(g); });
}

// The tuning table's rule, a starting point and not a measurement: the
// splits give every tile enough blocks, so filling the GPU does not decide
// here; the outputs computed for nothing (tiles hanging over dW^T (C·R·S,
// K)) and the reuse of each loaded value (the tile's size) do. So: the
// largest tile among those within 25% of the fewest padded outputs, the
// earlier candidate among equals.
// for_candidate(i, visit) visits candidate i of `count` (wgrad v5's
// pipelined tiles use the same rule).
template <class ForCandidate>
int fewest_padded_choice(const ConvShape& g, int count, ForCandidate&& for_candidate) {
  const auto padded = [&](int i) {
    return for_candidate(i, [&]<class T>() {
      return double(::warpnet::ceil_div(g.crs(), T::BM)) * T::BM * ::warpnet::ceil_div(g.K, T::BN) * T::BN;
    });
  };
  const auto tile = [&](int i) { return for_candidate(i, []<class T>() { return T::BM * T::BN; }); };
  double fewest = padded(0);
  for (int i = 1; i < count; ++i) fewest = padded(i) < fewest ? padded(i) : fewest;
  int best = -1;
  for (int i = 0; i < count; ++i)
    if (padded(i) <= 1.25 * fewest && (best < 0 || tile(i) > tile(best))) best = i;
  return best;
}
inline int table_choice(const ConvShape& g) {
  return fewest_padded_choice(g, kCandidates, [](int i, auto&& visit) { return with_candidate(i, visit); });
}

}  // namespace conv_wgrad_v03
