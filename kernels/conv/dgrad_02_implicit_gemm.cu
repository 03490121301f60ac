// Conv dgrad v2 — implicit GEMM: the data gradient as one shared-memory tiled
// GEMM over the whole batch, its A matrix gathered from dy tile by tile.
//
// Idea: dx[n,c,h,w] = sum over (k,r,s) of dy[n,k,p,q] · w[k,c,r,s], taken at
//   the (p,q) that tap (r,s) maps onto (h,w). As a GEMM,
//     dX (M, C) = A (M, K·R·S) @ B (K·R·S, C),   M = N·H·W input pixels,
//     A[m][krs] = dy[n, k, (h + pad − r·dil)/stride, (w + pad − s·dil)/stride]
//                 where both divisions are exact and land inside (P, Q), else 0
//     B[krs][c] = w[k, c, r, s]
//     dX[m][c]  = dx[n, c, h, w]
//   — the forward's implicit GEMM (conv v4) with dy in x's place, the filter
//   read "transposed" (c is the output column, k the reduction) and the
//   tap's direction reversed. The block structure is v4's unchanged: a 128
//   (pixels) x 64 (input channels) tile, 8 taps per step, the A tile gathered
//   into shared memory by lanes along consecutive w (consecutive q of dy at
//   stride 1: coalesced), 8x4 outputs per thread with its rows 16 apart so
//   the dx stores are consecutive w (coalesced, NCHW).
// Small C (the registration picks it for C <= 8): a 32 (pixels) x 8
//   (channels) tile, 32 taps per step, one output per thread. The wide tile
//   wastes most of its 64 columns when C is small (LeNet-5's conv2: C = 6,
//   58 of 64 are zeros) and gives few blocks, each walking the reduction in
//   many barrier-separated steps: at that layer (N=64, 14x14, K=16, 5x5) 98
//   blocks of 50 steps, against the narrow tile's 392 blocks of 13. On an
//   H200 a step took 3 to 4 us whatever its depth (8, 16 or 32 taps; each
//   thread gathers 4 A elements per step in all three tiles), which points
//   at the gather's index arithmetic (divisions by R·S and S), not the FMAs:
//   fewer steps, and more warps per SM to hide its latency, are what helped.
// The stride-2 tax, honestly: at stride s (dilation 1) only about one tap
//   (r,s) in s² reaches a given pixel; the others fail the divisibility
//   test and gather a zero. Their loads are skipped but the zeros still go
//   through the FMAs and the shared tiles, so at stride 2 three quarters of
//   the arithmetic is multiplying zeros. cuDNN and CUTLASS split a strided
//   dgrad into stride² smaller convolutions, one per phase of (h, w), each
//   dense; that is a later version's lesson.
// Changed from dgrad v1: one GEMM tile per block instead of one dx element
//   per thread; dy and w are staged in shared memory and each value read from
//   there feeds 4 or 8 FMAs, where v1 read both operands of every product
//   from global memory (the caches caught most of it).
// Trace (emulator, N=2 C=16 14x14 K=32 3x3 stride 1 pad 1): global bytes
//   asked 5.08e5 (v1: 1.31e7, 26x more; the registry formula 5.50e5);
//   shared accesses 1.00-way (no bank conflicts); dy gathers 5.06 sectors
//   per request, w 8.22 (its (k, c) rows are R·S floats long), dx stores 4.96.
// Measured: NVIDIA H200, 2026-11-30, run 3 (bench/results/nvidia-h200-2026-11-30-run3.json,
//   `warpnet bench conv2d_dgrad`), N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14:
//   1.43 / 1.48 / 1.57 ms, 10.3 / 10.0 / 9.45 TFLOP/s,
//   16.7% / 12.7% / 17.3% of cuDNN (fp32, no TF32) in the same run.
//   LeNet-5's conv2 (N=64 C=6 14x14 K=16 5x5, pad 0), H200, 2026-11-30, a
//   throwaway probe timing 500 back-to-back launches of each tile: wide
//   148.8 us (Nsight Compute had 151 us in a training step), 64x16x16 2x2
//   76.0 us, the chosen 32x8x32 1x1 51.5 us (2.9x); not yet rerun with
//   `warpnet bench conv2d_dgrad --size 64,6,14,14,16,5,5,1,0,1`.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace conv2d_dgrad/02 --size 2,16,14,14,32,3,3,1,1,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"

// dy: (N,K,P,Q), w: (K,C,R,S), dx: (N,C,H,W), NCHW row-major (ConvShape).
// Launch: block ((BM/TM)·(BN/TN)); grid (ceil(N·H·W / BM), ceil(C / BN)).
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    conv2d_dgrad_implicit_gemm(ConvShape g, const float* __restrict__ dy, const float* __restrict__ w,
                               float* __restrict__ dx) {
  constexpr int LM = BM / TM, LN = BN / TN, THREADS = LM * LN;  // lanes along m and along c
  // Bs rows 32/BK banks apart, an odd multiple of it in all: a warp's stores
  // below (BK taps x 32/BK channels) then hit 32 different banks (the wide
  // tile: 8 x 4, rows 68 floats long; the narrow one: 32 x 1, rows 9).
  constexpr int PAD = 32 / BK;
  static_assert(BM % TM == 0 && BN % TN == 0 && THREADS <= 1024 && THREADS % 32 == 0, "whole warps");
  static_assert(LM % 32 == 0 || 32 % LM == 0, "a warp spans whole rows of lanes along m");
  static_assert(THREADS % BM == 0 && BK % (THREADS / BM) == 0, "A tile: whole columns of m per pass");
  static_assert(THREADS % BK == 0 && BN % (THREADS / BK) == 0, "B tile: whole rows of taps per pass");
  static_assert(32 % BK == 0 && BN % PAD == 0 && (BN / PAD) % 2 == 0, "Bs rows an odd number of 32/BK banks apart");
  __shared__ float As[BK][BM];        // As[kk][mm] = A[m0 + mm][k0 + kk]: (BK, BM) transposed, gathered from dy
  __shared__ float Bs[BK][BN + PAD];  // Bs[kk][nn] = B[k0 + kk][n0 + nn] = w[k, n0 + nn, r, s]: (BK, BN)

  const int HW = g.H * g.W, M = g.N * HW, KRS = g.K * g.R * g.S, RS = g.R * g.S, PQ = g.P * g.Q;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int t = threadIdx.x, tm = t % LM, tn = t / LM;

  // The A row this thread gathers (the same at every step): input pixel
  // (n, h, w) of dx, as dy's image base and h + pad, w + pad.
  const int a_mm = t % BM, a_k = t / BM;  // elements (a_k + i·THREADS/BM, a_mm) of As
  const int a_m = m0 + a_mm;
  const bool a_valid = a_m < M;
  const int a_hw = a_m % HW;
  const int a_hp = a_hw / g.W + g.pad, a_wp = a_hw % g.W + g.pad;  // p·stride + r·dil, q·stride + s·dil
  const float* a_dy = dy + size_t(a_valid ? a_m / HW : 0) * g.K * PQ;  // image n of dy, (K,P,Q)
  // The B elements: consecutive lanes along the taps (r,s contiguous in w).
  const int b_kk = t % BK, b_nn = t / BK;  // elements (b_kk, b_nn + i·THREADS/BK) of Bs

  float acc[TM][TN] = {};  // dX[m0 + tm + i·LM][n0 + tn + j·LN], in registers
  for (int k0 = 0; k0 < KRS; k0 += BK) {
    for (int kk = a_k; kk < BK; kk += THREADS / BM) {
      const int krs = k0 + kk;  // the same for the whole warp
      float v = 0.0f;           // past M, past K·R·S, or no output under this tap: zero
      if (a_valid && krs < KRS) {
        const int k = krs / RS, r = (krs % RS) / g.S, s = krs % g.S;
        const int ph = a_hp - r * g.dil, qw = a_wp - s * g.dil;  // p·stride and q·stride, if tap (r,s) fed this pixel
        if (ph >= 0 && qw >= 0 && ph % g.stride == 0 && qw % g.stride == 0) {
          const int p = ph / g.stride, q = qw / g.stride;
          if (p < g.P && q < g.Q) v = a_dy[(k * g.P + p) * g.Q + q];
        }
      }
      As[kk][a_mm] = v;
    }
    for (int nn = b_nn; nn < BN; nn += THREADS / BK) {
      const int c = n0 + nn, krs = k0 + b_kk;
      float v = 0.0f;
      if (c < g.C && krs < KRS) v = w[(size_t(krs / RS) * g.C + c) * RS + krs % RS];  // w[k, c, r, s]
      Bs[b_kk][nn] = v;
    }
    __syncthreads();  // the tiles are complete before anyone reads them
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
      for (int i = 0; i < TM; ++i) a[i] = As[kk][tm + i * LM];  // LM consecutive floats: per half warp (wide) or warp (narrow)
      for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tn + j * LN];  // a broadcast: few tn per warp
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();  // everyone is done with the tiles before they are overwritten
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
