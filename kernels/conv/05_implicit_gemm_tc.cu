// Conv v5 — implicit GEMM on tensor cores: v4's virtual GEMM with bf16
// inputs, fp32 accumulation, mma.sync m16n8k16 fed by ldmatrix.
//
// Idea: the GEMM view is v4's, Y (N·P·Q, K) = A (N·P·Q, C·R·S) @ B (C·R·S, K),
//   and the arithmetic is matmul v12's: a block of 8 warps owns a 128 (pixels)
//   x 64 (output channels) tile of Y, each warp a 32x32 warp tile = 2x4
//   mma.sync m16n8k16 fragments, 32 fp32 accumulators per thread. Per 32-tap
//   step the block gathers the A tile from x (v4's im2col-on-chip, now 2-byte
//   elements) and copies the B tile from w into shared memory; each warp then
//   pulls its fragments out with ldmatrix.x4 and issues 8 mma.sync per 16
//   taps. A tensor core does a 16x8x16 product per instruction where v4's
//   threads did one FMA each.
// Layouts: the A tile is stored as gathered, tap-major with the pixels
//   contiguous — As[kk][mm], the "stored transposed A" of v12 — because the
//   gathering lanes run along pixels (consecutive q: consecutive x addresses,
//   consecutive shared halves, no bank conflicts); ldmatrix's .trans turns
//   its 8x8 blocks into the (m, k) fragments mma wants. w is (K, C·R·S)
//   row-major, B stored transposed with the taps contiguous: Bs[nn][kk] as w
//   holds it, and the plain ldmatrix gives the (k, n) fragments. Each tile row
//   is padded by 8 elements (16 bytes): 272- and 80-byte pitches put the 8 rows
//   of every ldmatrix matrix on 8 different 16-byte bank groups.
// Precision: x and w are stored as bf16 (8 significant bits: each within
//   2^-8 relative of its fp32 value); a product of two bf16 values has at
//   most 16 significant bits, exact in fp32, and the sums are fp32.
//   The op's check rounds the inputs to bf16 before the reference sees them
//   (device::make_inputs with Kernel::input_format), so the reference is the
//   exact convolution of what the kernel multiplies and only fp32 summation
//   error is left: the op's fp32 bound applies unchanged.
// Changed from v4: bf16 x and w (half the bytes); mma.sync + ldmatrix instead
//   of per-thread FMAs from shared memory; 32 taps per step instead of 8;
//   y is stored straight from the accumulator fragments (per warp store, 8
//   consecutive pixels of 4 channels: four 32-byte runs, or more sectors
//   when a run straddles a sector boundary).
// Still scalar (for v6): every gathered element is a 2-byte load. In NCHW the
//   taps of one pixel are H·W elements apart, so no vector load spans them;
//   and no cp.async double buffering (v12's) — the gather goes through
//   registers to compute its padding zeros.
// Trace (emulator, N=2 C=16 14x14 K=32 3x3 pad 1, beside v4): global bytes
//   asked 1.89e5 (v4: 3.29e5; the registry formula 2.00e5 counts padding
//   taps); 253 memory instructions per warp (v4: 1924 — its 55,296 shared
//   loads become 1,280 ldmatrix.x4); ldmatrix and shared stores 1.00-way (no
//   bank conflicts); x gathers 3.95 sectors per 2-byte request where 2
//   would hold the 64 bytes (3.29 at pad 0: a warp's 32 pixels cover three
//   image rows; at pad 1 lanes that skip padding taps also shift the
//   tracer's pairing of each lane's k-th load), w loads 1.80; y stores 6.04
//   sectors per request (66%).
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-cnn.json, `warpnet bench conv2d`),
//   N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14: 0.715 / 0.722 / 0.721 ms,
//   20.7 / 20.5 / 20.5 TFLOP/s. No % of cuDNN: the run has no bf16 version 0, only fp32 cuDNN
//   (65.1 / 75.9 / 61.3 TFLOP/s in the same run).
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace conv2d/05 --size 2,16,14,14,32,3,3,1,1,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/ptx.hpp"
#include "kernels/conv/conv_shape.hpp"

// x: (N,C,H,W) bf16, w: (K,C,R,S) bf16, y: (N,K,P,Q) fp32, NCHW row-major (ConvShape).
// Launch: block ((BM/WM)·(BN/WN)·32); grid (ceil(N·P·Q / BM), ceil(K / BN)).
template <int BM, int BN, int BK, int WM, int WN>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
    conv2d_implicit_gemm_tc(ConvShape g, const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                            float* __restrict__ y) {
  using T = __nv_bfloat16;
  constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;
  constexpr int MI = WM / 16, NI = WN / 8;  // m16 x n8 fragments per warp tile
  constexpr int PAD = 8;                    // 16 bytes per shared row: conflict-free ldmatrix (header)
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0,
                "warp tiles of whole m16 x n16 pairs, taps in steps of 16");
  static_assert(THREADS <= 1024, "CUDA's block size limit");
  static_assert(THREADS % BM == 0 && BK % (THREADS / BM) == 0, "A tile: whole rows of pixels per pass");
  static_assert(THREADS % BK == 0 && BN % (THREADS / BK) == 0, "B tile: whole rows of taps per pass");
  constexpr int A_PITCH = BM + PAD, B_PITCH = BK + PAD;
  __shared__ __align__(16) T As[BK * A_PITCH];  // As: (BK, BM+8) shared, As[kk][mm] = A[m0 + mm][k0 + kk]
  __shared__ __align__(16) T Bs[BN * B_PITCH];  // Bs: (BN, BK+8) shared, Bs[nn][kk] = w[n0 + nn][k0 + kk]

  const int M = g.gemm_m(), CRS = g.crs(), RS = g.R * g.S, PQ = g.P * g.Q;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;  // this warp's tile inside the block's

  // The A row (output pixel) this thread gathers at every step, as in v4.
  const int a_mm = t % BM, a_k = t / BM;  // elements (a_k + i·THREADS/BM, a_mm) of As
  const int a_m = m0 + a_mm;
  const bool a_valid = a_m < M;
  const int a_n = a_valid ? a_m / PQ : 0, a_pq = a_m % PQ;
  const int a_h0 = (a_pq / g.Q) * g.stride - g.pad, a_w0 = (a_pq % g.Q) * g.stride - g.pad;
  const T* a_x = x + size_t(a_n) * g.C * g.H * g.W;  // image a_n, (C,H,W)
  const int b_kk = t % BK, b_nn = t / BK;            // elements (b_nn + i·THREADS/BK, b_kk) of Bs

  // ldmatrix.x4: lane l gives the address of row l%8 of matrix l/8.
  const int mat = lane / 8, mrow = lane % 8;
  // A fragment (m16 x k16 at (m, k)) from k-major rows, loaded with .trans:
  // matrices (k 0-7, m 0-7), (k 0-7, m 8-15), (k 8-15, m 0-7), (k 8-15, m 8-15)
  // transpose into a0a1, a2a3, a4a5, a6a7.
  auto a_row = [&](int m, int k) -> const T* { return &As[(k + mrow + 8 * (mat / 2)) * A_PITCH + m + 8 * (mat % 2)]; };
  // B fragments of two n8 tiles (k16 x n16 at (k, n)) from n-major rows:
  // matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15)
  // are b0b1, b2b3 of the left n8 tile, then of the right one.
  auto b_row = [&](int k, int n) -> const T* { return &Bs[(n + mrow + 8 * (mat / 2)) * B_PITCH + k + 8 * (mat % 2)]; };

  float acc[MI][NI][4] = {};  // acc[i][j]: Y fragment of rows wm0+16i.., columns wn0+8j..
  for (int k0 = 0; k0 < CRS; k0 += BK) {
    for (int kk = a_k; kk < BK; kk += THREADS / BM) {
      const int crs = k0 + kk;  // the same for the whole warp: the divisions below are uniform
      T v = T(0.0f);            // past M, past C·R·S or in the padding: zero
      if (a_valid && crs < CRS) {
        const int c = crs / RS, r = (crs % RS) / g.S, s = crs % g.S;
        const int ih = a_h0 + r * g.dil, iw = a_w0 + s * g.dil;
        if (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W) v = a_x[(size_t(c) * g.H + ih) * g.W + iw];
      }
      As[kk * A_PITCH + a_mm] = v;
    }
    for (int nn = b_nn; nn < BN; nn += THREADS / BK) {
      const int k = n0 + nn, crs = k0 + b_kk;
      Bs[nn * B_PITCH + b_kk] = k < g.K && crs < CRS ? w[size_t(k) * CRS + crs] : T(0.0f);
    }
    __syncthreads();  // the tiles are complete before any warp loads fragments
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      uint32_t a[MI][4], b[NI / 2][4];  // a[i]: one A fragment; b[j]: B fragments of n8 tiles 2j, 2j+1
#pragma unroll
      for (int i = 0; i < MI; ++i) warpnet::ptx::ldmatrix_m8n8<4, true>(a[i], a_row(wm0 + 16 * i, kk));
#pragma unroll
      for (int j = 0; j < NI / 2; ++j) warpnet::ptx::ldmatrix_m8n8<4, false>(b[j], b_row(kk, wn0 + 16 * j));
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) {
          const uint32_t bj[2] = {b[j / 2][2 * (j % 2)], b[j / 2][2 * (j % 2) + 1]};
          warpnet::ptx::mma_m16n8k16_bf16_f32(acc[i][j], a[i], bj, acc[i][j]);
        }
    }
    __syncthreads();  // every warp is done with the tiles before they are overwritten
  }

  // Y fragment: c0,c1 at (groupID, 2·threadID_in_group + 0/1), c2,c3 eight
  // rows lower. Y[m][k] is y[n, k, p, q] = y[(n·K + k)·P·Q + pq]: per store,
  // the 8 groups are 8 consecutive pixels and the 4 lanes of a group 4
  // channels (P·Q apart).
  const int group = lane / 4, in_group = lane % 4;
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = m0 + wm0 + 16 * i + group + 8 * h;
      if (m >= M) continue;
      float* y_n = y + size_t(m / PQ) * g.K * PQ + m % PQ;  // y[n, 0, p, q]
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int k = n0 + wn0 + 8 * j + 2 * in_group + e;
          if (k < g.K) y_n[size_t(k) * PQ] = acc[i][j][2 * h + e];
        }
    }
}
