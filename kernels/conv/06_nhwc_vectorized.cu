// Conv v6 — NHWC implicit GEMM with float4 loads: put the channels innermost
// and the GEMM's reduction dimension becomes contiguous in memory.
//
// Idea: in NCHW (v4) the C·R·S taps of one output pixel are scattered: the
//   next channel is H·W floats away, the next filter column `dil` floats, so
//   every tap is its own 4-byte gather. Store x as (N,H,W,C) and w as
//   (K,R,S,C) instead, and order the reduction (r, s, c) with c innermost:
//     A[m][(r,s,c)] = x[n, p·stride − pad + r·dil, q·stride − pad + s·dil, c]
//     B[(r,s,c)][k] = w[k, r, s, c]          (w is (K, R·S·C) row-major)
//     Y[m][k]       = y[n, p, q, k]          (y is (N·P·Q, K) row-major)
//   Now for a fixed pixel and tap (r,s) the C channels are C consecutive
//   floats: when C % 4 == 0 four taps c..c+3 are one aligned float4 that is
//   wholly in the image or wholly in the padding (one bounds test per four
//   taps, one (r,s,c) split per four), w's rows are float4s as they stand,
//   and Y is plain row-major, so y is written four channels per store too —
//   no transposing epilogue. It is why cuDNN's fast paths, CUTLASS's conv
//   kernels and PyTorch's channels_last all want NHWC.
// One op, one layout — why this is the separate op `conv2d_nhwc`: an op's
//   buffers have one layout, and conv2d's are NCHW. Transposing x to NHWC in
//   a first launch (and y back after) would make this version pay a full
//   read and write of x and of y per call — about what v4 spends on its
//   whole A traffic at small C — and would measure the conversion, not the
//   layout. A framework that keeps activations NHWC end to end (PyTorch
//   channels_last, TensorFlow's default) converts once at the input, if at
//   all, so `conv2d_nhwc` times what such a framework pays: the convolution
//   alone. Its reference is cpu::conv2d on the tensors permuted to NCHW.
// Changed from v4 (the fp32 ladder; v5's tensor cores are the other axis — a
//   bf16 NHWC tensor-core kernel combines both): NHWC/KRSC buffers; A and B
//   tiles loaded as float4s along the taps and transposed into shared memory
//   (four scalar stores each, rows padded by 4 floats so the two float4s of
//   one pixel land 16 banks apart: no conflicts); each thread's 8x4 outputs
//   are contiguous rows and columns (matmul v6's thread tile), so the inner
//   loop reads As and Bs as float4s and y is stored as float4s along k.
// Falls back honestly: when C % 4 != 0 (an RGB input layer, C = 3) or a
//   pointer is not 16-byte aligned, taps are gathered one float at a time in
//   the same pattern; when K % 4 != 0, y is stored element by element
//   (float4_rows decides, once per launch, the same for every thread).
// Trace (emulator, N=2 C=16 14x14 K=32 3x3 pad 1, beside v4 on the NCHW
//   op): the same 3.29e5 global bytes in 588 16-byte load requests at 100%
//   sector efficiency, 14.8 sectors each (v4: 2,400 4-byte requests, 77.5%);
//   y in 200 float4 stores at 100% (v4: 400 at 79%); shared accesses 1.00-way
//   (no bank conflicts); 565 memory instructions per warp (v4: 1924).
// Measured: not yet measured on a GPU.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace conv2d_nhwc/06 --size 2,16,14,14,32,3,3,1,1,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"
#include "kernels/conv/conv_shape.hpp"

// x: (N,H,W,C), w: (K,R,S,C), y: (N,P,Q,K), NHWC row-major (ConvShape's sizes;
// its gemm_m() = N·P·Q and crs() = R·S·C hold in this order too).
// Launch: block ((BM/TM)·(BN/TN)); grid (ceil(N·P·Q / BM), ceil(K / BN)).
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    conv2d_nhwc_vectorized(ConvShape g, const float* __restrict__ x, const float* __restrict__ w,
                           float* __restrict__ y) {
  using warpnet::float4_rows, warpnet::load_float4, warpnet::load_row4, warpnet::store_float4, warpnet::store_row4;
  constexpr int LN = BN / TN, THREADS = (BM / TM) * LN;  // one thread per TM x TN tile of Y
  constexpr int K4 = BK / 4;                             // float4s per row of a tile
  constexpr int PAD = 4;  // pitch ≡ 4 (mod 32 banks): the transposing stores of a warp hit 32 banks (header)
  static_assert(BM % TM == 0 && BN % TN == 0 && THREADS <= 1024 && THREADS % 32 == 0, "whole warps");
  static_assert(BK % 4 == 0 && TM % 4 == 0 && TN % 4 == 0 && BM % 32 == 0 && BN % 32 == 0,
                "tiles are moved in float4s; padded pitches stay 16-byte multiples");
  static_assert((BM * K4) % THREADS == 0, "the same number of A float4s per thread");
  constexpr int A_PASSES = BM * K4 / THREADS, A_ROWS = THREADS / K4;  // A_ROWS pixels per pass
  __shared__ __align__(16) float As[BK][BM + PAD];  // As: (BK, BM) shared, As[kk][mm] = A[m0 + mm][k0 + kk]
  __shared__ __align__(16) float Bs[BK][BN + PAD];  // Bs: (BK, BN) shared, Bs[kk][nn] = w[n0 + nn][k0 + kk]

  const int M = g.gemm_m(), RSC = g.crs(), SC = g.S * g.C, PQ = g.P * g.Q;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int t = threadIdx.x, tc = t % LN, tr = t / LN;  // this thread's Y tile: rows tr·TM.., columns tc·TN..
  // Every thread and block takes the same branch (no divergence): C % 4 == 0
  // makes R·S·C a multiple of 4 as well, so w's rows are float4s too.
  const bool vec = float4_rows(x, g.C) && float4_rows(w, RSC), y_vec = float4_rows(y, g.K);

  // The pixels this thread gathers for (the same at every step): tile row
  // a_row + i·A_ROWS, taps k0 + a_q .. + 3. Image base (n·H·W) and the input
  // pixel under tap (0,0); valid = false past M.
  const int a_q = (t % K4) * 4, a_row = t / K4;
  int a_img[A_PASSES], a_h0[A_PASSES], a_w0[A_PASSES];
  bool a_valid[A_PASSES];
  for (int i = 0; i < A_PASSES; ++i) {
    const int m = m0 + a_row + i * A_ROWS, pq = m % PQ;
    a_valid[i] = m < M;
    a_img[i] = a_valid[i] ? (m / PQ) * g.H * g.W : 0;
    a_h0[i] = (pq / g.Q) * g.stride - g.pad, a_w0[i] = (pq % g.Q) * g.stride - g.pad;
  }
  // Taps rsc..rsc+3 of pass i's pixel, zeros past C·R·S and in the padding.
  auto gather4 = [&](int i, int rsc) -> float4 {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (!a_valid[i]) return v;
    if (vec) {  // one pixel, four consecutive channels: one bounds test, one 16-byte load
      if (rsc >= RSC) return v;
      const int r = rsc / SC, s = (rsc / g.C) % g.S, c = rsc % g.C;
      const int ih = a_h0[i] + r * g.dil, iw = a_w0[i] + s * g.dil;
      if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) return v;
      return load_float4(x + (size_t(a_img[i]) + ih * g.W + iw) * g.C + c);
    }
    float e[4] = {0.0f, 0.0f, 0.0f, 0.0f};  // the fallback: each tap on its own
    for (int j = 0; j < 4 && rsc + j < RSC; ++j) {
      const int r = (rsc + j) / SC, s = ((rsc + j) / g.C) % g.S, c = (rsc + j) % g.C;
      const int ih = a_h0[i] + r * g.dil, iw = a_w0[i] + s * g.dil;
      if (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W) e[j] = x[(size_t(a_img[i]) + ih * g.W + iw) * g.C + c];
    }
    return make_float4(e[0], e[1], e[2], e[3]);
  };

  float acc[TM][TN] = {};  // acc: (TM, TN) registers, Y[m0 + tr·TM + i][n0 + tc·TN + j]
  float regM[TM], regN[TN];
  for (int k0 = 0; k0 < RSC; k0 += BK) {
    // A: consecutive threads take the K4 float4s of one pixel's taps, then the
    // next pixel's: a warp reads 32/K4 runs of BK contiguous floats.
    for (int i = 0; i < A_PASSES; ++i) {
      const float4 v = gather4(i, k0 + a_q);
      const int mm = a_row + i * A_ROWS;
      As[a_q + 0][mm] = v.x;  // transposed on the way in: four scalar stores
      As[a_q + 1][mm] = v.y;
      As[a_q + 2][mm] = v.z;
      As[a_q + 3][mm] = v.w;
    }
    // B: w's rows as float4s (load_row4 falls back to scalars when !vec).
    for (int f = t; f < BN * K4; f += THREADS) {
      const int nn = f / K4, q = (f % K4) * 4;
      const float4 v = load_row4(w, g.K, RSC, n0 + nn, k0 + q, vec);
      Bs[q + 0][nn] = v.x;
      Bs[q + 1][nn] = v.y;
      Bs[q + 2][nn] = v.z;
      Bs[q + 3][nn] = v.w;
    }
    __syncthreads();  // the tiles are complete before anyone reads them
    for (int kk = 0; kk < BK; ++kk) {
      // A thread's TM rows and TN columns are contiguous in As[kk] and Bs[kk].
      for (int i = 0; i < TM; i += 4) {
        const float4 v = load_float4(&As[kk][tr * TM + i]);
        regM[i + 0] = v.x, regM[i + 1] = v.y, regM[i + 2] = v.z, regM[i + 3] = v.w;
      }
      for (int j = 0; j < TN; j += 4) {
        const float4 v = load_float4(&Bs[kk][tc * TN + j]);
        regN[j + 0] = v.x, regN[j + 1] = v.y, regN[j + 2] = v.z, regN[j + 3] = v.w;
      }
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] += regM[i] * regN[j];
    }
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }
  // Y is y as stored, (N·P·Q, K) row-major: four channels per store.
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; j += 4)
      store_row4(y, M, g.K, m0 + tr * TM + i, n0 + tc * TN + j,
                 make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), y_vec);
}
