// Conv v4 — implicit GEMM: the GEMM of v3 without the im2col matrix; each
// block gathers its tiles of the virtual column matrix straight from x.
//
// Idea: view the convolution as one GEMM over the whole batch,
//   Y (M, N') = A (M, K') @ B (K', N'), with M = N·P·Q output pixels,
//   N' = K output channels and K' = C·R·S taps:
//     A[m][crs] = x[n, c, p·stride − pad + r·dil, q·stride − pad + s·dil]   (m = (n,p,q), crs = (c,r,s))
//     B[crs][k] = w[k, c, r, s]  (w is B stored transposed: (K, C·R·S) row-major)
//     Y[m][k]   = y[n, k, p, q]
//   A is never stored. When a block stages its BK x BM tile of A in shared
//   memory it computes, per element, which x pixel that is (or a padding
//   zero) and loads it: v3's im2col happens tile by tile, on chip, inside the
//   GEMM. One launch covers every image (M = N·P·Q is large even at 14x14),
//   and there is no workspace. The m -> (n,p,q) split of a thread's rows is
//   done once; the crs -> (c,r,s) split once per element per k-step.
//   The block tile is BM x BN of Y, BK deep; each thread keeps TM x TN
//   outputs in registers (v5 of the matmul ladder), its rows interleaved
//   BM/TM apart so that the 16 lanes along m read 16 consecutive floats of As
//   and store 16 consecutive q of y (coalesced, NCHW).
// Changed from v3: no im2col kernel, no workspace, one launch; the A tile is
//   a gather from x instead of a copy of a stored matrix; the GEMM is a
//   single-buffered register-blocked one (v5-like), so v5 (tensor cores) and
//   v6 (NHWC, vector loads) have the matmul ladder's later steps still to take.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-cnn.json, `warpnet bench conv2d`),
//   N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14: 1.05 / 1.07 / 1.14 ms,
//   14.1 / 13.8 / 13.0 TFLOP/s, 21.6% / 18.2% / 21.2% of cuDNN (fp32, no TF32) in the same run.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace conv2d/04 --size 3,3,13,13,5,3,3,1,1,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"

// x: (N,C,H,W), w: (K,C,R,S), y: (N,K,P,Q), NCHW row-major (ConvShape).
// Launch: block ((BM/TM)·(BN/TN)); grid (ceil(N·P·Q / BM), ceil(K / BN)).
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    conv2d_implicit_gemm(ConvShape g, const float* __restrict__ x, const float* __restrict__ w,
                         float* __restrict__ y) {
  constexpr int LM = BM / TM, LN = BN / TN, THREADS = LM * LN;  // lanes along m and along k
  constexpr int PAD = 4;  // Bs rows 4 banks apart: the transposing stores below spread over all 32 banks
  static_assert(BM % TM == 0 && BN % TN == 0 && THREADS <= 1024 && THREADS % 32 == 0, "whole warps");
  static_assert(LM % 32 == 0 || 32 % LM == 0, "a warp spans whole rows of lanes along m");
  static_assert(THREADS % BM == 0 && BK % (THREADS / BM) == 0, "A tile: whole columns of m per pass");
  static_assert(THREADS % BK == 0 && BN % (THREADS / BK) == 0, "B tile: whole rows of crs per pass");
  __shared__ float As[BK][BM];        // As[kk][mm] = A[m0 + mm][k0 + kk]: (BK, BM) transposed, gathered A tile
  __shared__ float Bs[BK][BN + PAD];  // Bs[kk][nn] = w[n0 + nn][k0 + kk]: (BK, BN) B tile

  const int M = g.gemm_m(), CRS = g.crs(), RS = g.R * g.S, PQ = g.P * g.Q;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int t = threadIdx.x, tm = t % LM, tn = t / LM;

  // The A row this thread gathers (the same at every k-step): output pixel
  // (n,p,q) of y, as the image's base and the input pixel under tap (0,0).
  const int a_mm = t % BM, a_k = t / BM;  // element (a_k + i·THREADS/BM, a_mm) of As
  const int a_m = m0 + a_mm;
  const bool a_valid = a_m < M;
  const int a_n = a_valid ? a_m / PQ : 0, a_pq = a_m % PQ;
  const int a_h0 = (a_pq / g.Q) * g.stride - g.pad, a_w0 = (a_pq % g.Q) * g.stride - g.pad;
  const float* a_x = x + a_n * g.C * g.H * g.W;  // image a_n, (C,H,W)
  // The B elements: consecutive lanes along crs (contiguous in w).
  const int b_kk = t % BK, b_nn = t / BK;  // element (b_kk, b_nn + i·THREADS/BK) of Bs

  float acc[TM][TN] = {};  // Y[m0 + tm + i·LM][n0 + tn + j·LN], in registers
  for (int k0 = 0; k0 < CRS; k0 += BK) {
    for (int kk = a_k; kk < BK; kk += THREADS / BM) {
      const int crs = k0 + kk;
      float v = 0.0f;  // past M, past C·R·S or in the padding: zero
      if (a_valid && crs < CRS) {
        const int c = crs / RS, r = (crs % RS) / g.S, s = crs % g.S;
        const int ih = a_h0 + r * g.dil, iw = a_w0 + s * g.dil;
        if (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W) v = a_x[(c * g.H + ih) * g.W + iw];
      }
      As[kk][a_mm] = v;
    }
    for (int nn = b_nn; nn < BN; nn += THREADS / BK) {
      const int k = n0 + nn, crs = k0 + b_kk;
      Bs[b_kk][nn] = (k < g.K && crs < CRS) ? w[k * CRS + crs] : 0.0f;
    }
    __syncthreads();  // the tiles are complete before anyone reads them
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
      for (int i = 0; i < TM; ++i) a[i] = As[kk][tm + i * LM];  // 16 consecutive floats per half warp
      for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tn + j * LN];  // a broadcast: few tn per warp
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }

  // Y[m][k] is y[n, k, p, q] = y[(n·K + k)·P·Q + pq]: along m (lanes tm) the
  // stores are consecutive q, coalesced.
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + tm + i * LM;
    if (m >= M) break;
    const int n = m / PQ, pq = m % PQ;
    for (int j = 0; j < TN; ++j) {
      const int k = n0 + tn + j * LN;
      if (k < g.K) y[(n * g.K + k) * PQ + pq] = acc[i][j];
    }
  }
}
