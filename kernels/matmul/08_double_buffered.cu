// SGEMM v8 — double buffering with cp.async: the next k-tile travels
// global -> shared while the current one is multiplied.
//
// Idea: in v5-v7 every k-step loads its tiles, waits at a barrier, computes,
//   and waits again before the tiles may be overwritten: while the loads are in
//   flight the FMA units idle. Here shared memory holds two stages. At the top
//   of step k the block waits for stage k%2, then issues the copies of tile
//   k+1 into the other stage and computes on stage k%2 while they fly. The
//   copies are cp.async (sm_80+): global -> shared without a register round
//   trip and without stalling the issuing thread, so the loads of step k+1
//   overlap the FMAs of step k. One __syncthreads() per k-step does both jobs
//   of v5's two: stage k%2 is complete for everyone, and everyone is done with
//   the stage the new copies overwrite (it was read during step k-1).
// Changed from v7: the 128x128 block tile, BK = 8, 8x8 register tile per
//   thread, padded rows and interleaved columns (a thread's 8 columns are two
//   float4s 64 apart, so a quarter warp's float4 reads of Bs are 128
//   contiguous bytes) are kept; the loads become cp.async into two stages.
//   Which cp.async depends on the layout, because cp.async copies bytes as
//   they lie and cannot transpose:
//   - tiles are k-major in shared memory (As[k][m], Bs[k][n]) so the inner
//     loop reads float4s along m and n;
//   - an operand stored contiguous along m (A when TA) or n (B when !TB)
//     copies 16 bytes (4 floats of one row) per cp.async when its row length
//     is a multiple of 4 and the pointer 16-byte aligned (cp.async demands an
//     aligned source); otherwise one float per 4-byte cp.async;
//   - an operand stored contiguous along k (A row-major, B when TB) must be
//     transposed on the way: one float per 4-byte cp.async, each to its
//     transposed place. A 16-byte copy would put 4 k-values side by side in a
//     row of the k-major tile, where they do not belong.
//   Past the edges cp.async's src-size = 0 zero-fills, so no thread branches
//   around a copy and any M, N, K works. Rows are padded by 4 floats: the
//   transposing 4-byte copies of a warp (8 k x 4 m) then land in 32 different
//   banks, and rows stay 16-byte aligned.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   4.67 ms = 29.4 TFLOP/s at 4096^3, 57.9% of cuBLAS SGEMM in the same run; 29.8 TFLOP/s at 8192^3, 58.3%.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace matmul/08 --size 128,128,128
#include "kernels/common/float4_rows.hpp"
#include "kernels/common/ptx.hpp"

namespace sgemm_v8 {

// Copies one k-tile of an operand into a k-major shared tile:
//   dst: (BK, W) shared, row stride LD; dst[k][j] = X(j0 + j, k0 + k), 0 past J or K.
// The operand X (J, K) is stored (K, J) row-major when KMajor (contiguous
// along j, like the tile) or (J, K) row-major otherwise (contiguous along k).
// vec: 16-byte copies are allowed (KMajor, J % 4 == 0, src 16-byte aligned).
template <int BK, int W, int LD, int THREADS, bool KMajor>
__device__ __forceinline__ void stage_tile(float* dst, const float* __restrict__ src, int j0, int k0, int J, int K,
                                           int t, bool vec) {
  if constexpr (KMajor) {
    if (vec) {
      // Consecutive lanes copy consecutive 16-byte chunks of a stored row.
      // J % 4 == 0 and j0 % 4 == 0, so a chunk is wholly inside J or wholly past it.
      constexpr int CHUNKS = BK * W / 4;
      static_assert(CHUNKS % THREADS == 0, "every thread copies the same number of chunks");
      for (int c = t; c < CHUNKS; c += THREADS) {
        const int k = c / (W / 4), j = (c % (W / 4)) * 4;
        const bool in = j0 + j < J && k0 + k < K;
        warpnet::ptx::cp_async_cg(dst + k * LD + j, in ? src + size_t(k0 + k) * J + j0 + j : src, in ? 16 : 0);
      }
      return;
    }
  }
  static_assert(BK * W % THREADS == 0, "every thread copies the same number of elements");
  static_assert(W % 32 == 0 && LD % 32 == 4 && (KMajor || BK % 8 == 0), "the copies' layout, below");
  for (int e = t; e < BK * W; e += THREADS) {
    // Consecutive lanes read consecutive stored addresses. K-major operand:
    // 32 floats of one row of the tile. K-contiguous one: 8 k of one row (32
    // bytes, a sector), then the next row; its copies land transposed, a
    // warp's as 8 k x 4 j at k * LD + j: 32 different banks, since LD = 4 (mod 32).
    const int k = KMajor ? e / W : (e / (8 * W)) * 8 + e % 8;
    const int j = KMajor ? e % W : (e / 8) % W;
    const bool in = j0 + j < J && k0 + k < K;
    const size_t at = KMajor ? size_t(k0 + k) * J + j0 + j : size_t(j0 + j) * K + k0 + k;
    warpnet::ptx::cp_async_ca<4>(dst + k * LD + j, in ? src + at : src, in ? 4 : 0);
  }
}

// One k-step's copies for the C tile at (row0, col0): op(A)'s (BK, BM) tile
// into As_s and op(B)'s (BK, BN) tile into Bs_s (rows BM + PAD and BN + PAD
// floats apart), as one cp.async group. What this kernel's k loop issues
// per step, and every double-buffered FP32 kernel after it (v9, v10's
// small-problem kernel). a_vec, b_vec: stage_tile's 16-byte copies allowed.
template <int BK, int BM, int BN, int PAD, int THREADS, bool TA, bool TB>
__device__ __forceinline__ void stage_operands(float* As_s, float* Bs_s, const float* __restrict__ A,
                                               const float* __restrict__ B, int M, int N, int K, int row0, int col0,
                                               int k0, int t, bool a_vec, bool b_vec) {
  stage_tile<BK, BM, BM + PAD, THREADS, TA>(As_s, A, row0, k0, M, K, t, a_vec);
  stage_tile<BK, BN, BN + PAD, THREADS, !TB>(Bs_s, B, col0, k0, N, K, t, b_vec);
  warpnet::ptx::cp_async_commit();  // this k-tile's copies are one group
}

}  // namespace sgemm_v8

// A: (M,K) row-major, or (K,M) when TA; B: (K,N) row-major, or (N,K) when TB;
// C: (M,N) row-major. C = op(A) @ op(B).
// Launch: block (BM/8 * BN/8) = 256; grid (ceil(N/BN), ceil(M/BM)).
template <int BM, int BN, int BK, bool TA = false, bool TB = false>
__global__ void __launch_bounds__((BM / 8) * (BN / 8))
    sgemm_double_buffered(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                          float* __restrict__ C) {
  using warpnet::load_float4, warpnet::store_float4;  // 16-byte accesses the tracer sees whole (float4_rows.hpp)
  constexpr int TM = 8, TN = 8;  // a thread's C tile: 8 rows x two float4s of columns
  constexpr int THREADS = (BM / TM) * (BN / TN);
  constexpr int PAD = 4;  // keeps rows 16-byte aligned; spreads the transposing copies over all banks
  static_assert(BM % TM == 0 && BN % (2 * TN) == 0, "thread tiles cover the block tile; column halves BN/2 apart");
  static_assert(THREADS <= 1024 && THREADS % 32 == 0, "whole warps, at most 1024 threads");
  static_assert(2 * BK * (BM + BN + 2 * PAD) * 4 <= 48 * 1024, "two stages fit in 48 KiB of static shared memory");

  __shared__ __align__(16) float As[2][BK][BM + PAD];  // As[s][k][m] = op(A)[row0 + m, k0 + k]: (BK, BM) transposed A tile, stage s
  __shared__ __align__(16) float Bs[2][BK][BN + PAD];  // Bs[s][k][n] = op(B)[k0 + k, col0 + n]: (BK, BN) B tile, stage s
  const int t = threadIdx.x;
  const int tx = t % (BN / TN), ty = t / (BN / TN);
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  // 16-byte copies need rows of whole float4s and an aligned base (cudaMalloc's is).
  const bool a_vec = TA && ::warpnet::float4_rows(A, M);
  const bool b_vec = !TB && ::warpnet::float4_rows(B, N);

  auto stage = [&](int s, int k0) {
    sgemm_v8::stage_operands<BK, BM, BN, PAD, THREADS, TA, TB>(&As[s][0][0], &Bs[s][0][0], A, B, M, N, K, row0, col0,
                                                                k0, t, a_vec, b_vec);
  };

  float acc[TM][TN] = {};  // acc: (TM, TN) registers, C at the rows and columns given before the stores
  const int steps = warpnet::ceil_div(K, BK);
  if (steps > 0) stage(0, 0);
  for (int step = 0; step < steps; ++step) {
    const int s = step % 2;
    warpnet::ptx::cp_async_wait<0>();  // this thread's copies into stage s have landed
    // Everyone's copies into stage s are visible, and everyone has finished
    // step-1, which read stage 1-s: the only barrier of the step.
    __syncthreads();
    if (step + 1 < steps) stage(1 - s, (step + 1) * BK);  // flies while stage s is multiplied
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];  // a: (TM) registers, As[s][k][ty*TM + i]; b: (TN) registers, this thread's columns of Bs[s][k]
      for (int h = 0; h < 2; ++h) {
        const float4 a4 = load_float4(&As[s][k][ty * TM + 4 * h]);
        const float4 b4 = load_float4(&Bs[s][k][h * (BN / 2) + tx * 4]);
        a[4 * h + 0] = a4.x, a[4 * h + 1] = a4.y, a[4 * h + 2] = a4.z, a[4 * h + 3] = a4.w;
        b[4 * h + 0] = b4.x, b[4 * h + 1] = b4.y, b[4 * h + 2] = b4.z, b[4 * h + 3] = b4.w;
      }
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
  }

  // acc[i][j] is C[row0 + ty*TM + i, col0 + (j/4)*BN/2 + tx*4 + j%4].
  // float4 stores when a row is whole float4s; scalar guarded stores at the edges.
  const bool c_vec = ::warpnet::float4_rows(C, N);
  for (int i = 0; i < TM; ++i) {
    const int r = row0 + ty * TM + i;
    for (int h = 0; h < 2 && r < M; ++h) {
      const int c = col0 + h * (BN / 2) + tx * 4;
      const float* v = &acc[i][4 * h];
      if (c_vec && c + 3 < N) {
        store_float4(&C[size_t(r) * N + c], make_float4(v[0], v[1], v[2], v[3]));
      } else {
        for (int j = 0; j < 4; ++j)
          if (c + j < N) C[size_t(r) * N + c + j] = v[j];
      }
    }
  }
}
