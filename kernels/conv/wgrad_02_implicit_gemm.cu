// Conv wgrad v2 — implicit GEMM with a deterministic split of the long
// reduction: slices of N·P·Q summed by separate blocks into partial tiles,
// then added up in a fixed order by a second kernel.
//
// Idea: dw[k,c,r,s] = sum over (n,p,q) of dy[n,k,p,q] · x[n, c, p·stride − pad + r·dil,
//   q·stride − pad + s·dil]. As a GEMM,
//     dW (K, C·R·S) = A (K, L) @ B (L, C·R·S),   L = N·P·Q output pixels,
//     A[k][l]   = dy[n, k, p, q]                (l = (n,p,q))
//     B[l][crs] = x[n, c, p·stride − pad + r·dil, q·stride − pad + s·dil]   (0 in the padding)
//   — B is the forward's implicit A, transposed. The output is small
//   (K·C·R·S: 36,864 floats for a 64->64 3x3 layer, 9 tiles of 64x64) and
//   the reduction long (L = 200,704 at N=64, 56x56), the opposite of the
//   forward: one block per output tile would leave a 132-SM GPU with 9
//   blocks, each looping 6,272 times. So the reduction is split: block
//   (tile, z) sums slice z of L — `slice` consecutive pixels, a multiple of
//   BK — into its own partial tile part[z] (a workspace of splits·K·C·R·S
//   floats), and sum_splits (kernels/common) adds the partials into dw in
//   one fixed order. The registration picks splits so that tiles·splits is
//   about 264 blocks (two per SM of an H200), but never slices shorter than
//   4 steps; one split writes dw directly and skips the second kernel.
// Deterministic on purpose: every dw element is the same sum in the same
//   order on every run (each thread walks its slice in order, sum_splits
//   adds the slices in an order fixed by their count), whatever order the
//   blocks ran in. Split-K with atomicAdd into dw would save the workspace
//   (2·splits·K·C·R·S·4 bytes of traffic) and the second launch, but float
//   addition is not associative: the result would change from run to run in
//   the last bits, and dw would have to be zeroed first. A one-launch deterministic form exists too
//   (CUTLASS's serial split-K: the blocks of a tile take turns, in order,
//   through a semaphore), at the price of blocks waiting on each other.
// Tiles: 64 (output channels k) x 64 (taps crs) per block, 32 pixels l per
//   step. Both tiles are loaded by lanes along l — consecutive q: dy's planes
//   and x's rows are read at consecutive addresses (every other one at
//   stride 2) — and each thread splits its l into (n,p,q) once per step.
//   Shared rows are padded to 65 floats: a warp's 32 stores down one column
//   fall in 32 different banks. Each thread keeps 4x4 outputs, the lanes
//   along crs fastest, so the partial tiles are stored 16 floats at a time.
// Changed from wgrad v1: one tile per block instead of one dw element per
//   thread (each x and dy value staged in shared memory feeds 64 FMAs: 16
//   threads read it, 4 each); the reduction split over
//   blocks; a second, elementwise kernel for the ordered sum.
// Trace (emulator, N=1 C=16 8x8 K=32 3x3 pad 1: one split, the GEMM alone):
//   global bytes asked 7.40e4 (v1: 2.00e6, 27x more; the registry formula
//   7.99e4); dy loads 4.00 sectors per request (100%), x gathers 6.60 (an
//   8-wide image: 32 pixels are four rows), partial-tile stores 4.00; shared
//   accesses 1.00-way (no bank conflicts). With splits (N=2 14x14: 4) the
//   trace shows both launches; the second, the ordered sum: 4.00 sectors per request.
// Measured: NVIDIA H200, 2026-11-30, run 3 (bench/results/nvidia-h200-2026-11-30-run3.json,
//   `warpnet bench conv2d_wgrad`), N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14:
//   1.49 / 1.50 / 1.50 ms, 9.95 / 9.87 / 9.89 TFLOP/s,
//   39.3% / 21.6% / 15.8% of cuDNN (fp32, no TF32) in the same run.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace conv2d_wgrad/02 --size 1,16,8,8,32,3,3,1,1,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"

// x: (N,C,H,W), dy: (N,K,P,Q), NCHW row-major (ConvShape); part: (splits, K,
// C·R·S) row-major, block z writes part[z] = the sum over pixels
// l in [z·slice, (z+1)·slice) ∩ [0, N·P·Q). slice % BK == 0.
// Launch: block ((BM/TM)·(BN/TN)); grid (ceil(C·R·S / BN), ceil(K / BM), splits).
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    conv2d_wgrad_implicit_gemm(ConvShape g, int slice, const float* __restrict__ x, const float* __restrict__ dy,
                               float* __restrict__ part) {
  constexpr int LM = BM / TM, LN = BN / TN, THREADS = LM * LN;  // lanes along k and along crs
  static_assert(BM % TM == 0 && BN % TN == 0 && THREADS <= 1024 && THREADS % 32 == 0, "whole warps");
  static_assert(BK == 32, "a warp loads one column of a tile: 32 pixels l");
  static_assert(THREADS % BK == 0 && BM % (THREADS / BK) == 0 && BN % (THREADS / BK) == 0,
                "the tiles: whole rows per pass");
  constexpr int ROWS = THREADS / BK;  // tile rows (k or crs) loaded per pass
  __shared__ float As[BK][BM + 1];    // As[ll][mm] = dy[n, m0 + mm, p, q] at pixel l0 + ll: (BK, BM)
  __shared__ float Bs[BK][BN + 1];    // Bs[ll][nn] = B[l0 + ll][n0 + nn], gathered from x: (BK, BN)

  const int CRS = g.crs(), RS = g.R * g.S, PQ = g.P * g.Q, L = g.N * PQ;
  const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM;
  const int l_begin = blockIdx.z * slice, l_end = min(L, l_begin + slice);
  const int t = threadIdx.x, tn = t % LN, tm = t / LN;
  const int ll = t % BK, row = t / BK;  // this thread loads column ll, rows row + i·ROWS of each tile

  float acc[TM][TN] = {};  // part[z][m0 + tm + i·LM][n0 + tn + j·LN], in registers
  for (int l0 = l_begin; l0 < l_end; l0 += BK) {
    // This thread's pixel for the step, split once: image n, (p, q).
    const int l = l0 + ll;
    const bool l_valid = l < l_end;
    const int n = l_valid ? l / PQ : 0, pq = l % PQ;
    const int h0 = (pq / g.Q) * g.stride - g.pad, w0 = (pq % g.Q) * g.stride - g.pad;  // x pixel under tap (0,0)
    const float* dy_l = dy + size_t(n) * g.K * PQ + pq;  // dy[n, 0, p, q]; channel k is k·P·Q further
    const float* x_n = x + size_t(n) * g.C * g.H * g.W;  // image n, (C,H,W)
    for (int i = 0; i < BM / ROWS; ++i) {
      const int k = m0 + row + i * ROWS;
      As[ll][row + i * ROWS] = l_valid && k < g.K ? dy_l[size_t(k) * PQ] : 0.0f;
    }
    for (int i = 0; i < BN / ROWS; ++i) {
      const int crs = n0 + row + i * ROWS;  // the same for the whole warp: the divisions below are uniform
      float v = 0.0f;
      if (l_valid && crs < CRS) {
        const int c = crs / RS, r = (crs % RS) / g.S, s = crs % g.S;
        const int ih = h0 + r * g.dil, iw = w0 + s * g.dil;
        if (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W) v = x_n[(c * g.H + ih) * g.W + iw];
      }
      Bs[ll][row + i * ROWS] = v;
    }
    __syncthreads();  // the tiles are complete before anyone reads them
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
      for (int i = 0; i < TM; ++i) a[i] = As[kk][tm + i * LM];  // two words per warp: broadcasts
      for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tn + j * LN];  // 16 consecutive floats per half warp
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }

  float* out = part + size_t(blockIdx.z) * g.K * CRS;  // part[z]: (K, C·R·S)
  for (int i = 0; i < TM; ++i) {
    const int k = m0 + tm + i * LM;
    if (k >= g.K) break;
    for (int j = 0; j < TN; ++j) {
      const int crs = n0 + tn + j * LN;
      if (crs < CRS) out[size_t(k) * CRS + crs] = acc[i][j];
    }
  }
}
