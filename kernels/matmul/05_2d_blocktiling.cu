// SGEMM v5 — 2D block tiling: each thread computes a TM x TN register tile of C.
//
// Idea: v4 reused one Bs value across a column of TM outputs. A TM x TN tile
//   reuses in both directions: per k a thread copies TM values of As (its rows)
//   and TN values of Bs (its columns) into registers, then does all TM*TN
//   multiply-adds from registers — (TM + TN) shared loads per TM*TN FMAs,
//   16 per 64 (0.25 per FMA) at 8 x 8, against 1.125 in v4. The block tile
//   grows to 128 x 128 (BK = 8), so each float brought from global memory
//   feeds twice as many FMAs as in v4's 64 x 64 tile.
// Changed from v4: an 8 x 8 tile of accumulators per thread instead of a
//   column of 8; As column / Bs row cached in registers (regM, regN) for each
//   k; BM = BN = 128 with 256 threads, each loading 4 elements of each tile.
// Still there (for v6 and v7): every access is 4 bytes wide, and the inner
//   loop's shared reads collide in banks: Bs 4-way (a thread's 8 columns
//   start 8 words after its neighbour's, so lanes 0, 4, 8 and 12 share a
//   bank), As 2-way (lanes 0-15 and 16-31 read rows TM*BK = 64 words apart).
//   Each lane also writes C at a 32-byte stride: 32 sectors per store request.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   6.24 ms = 22.0 TFLOP/s at 4096^3, 43.3% of cuBLAS SGEMM in the same run; 22.1 TFLOP/s at 8192^3, 43.3%.
//   Emulator: `warpnet trace matmul/05_2d_blocktiling --size 128,128,128`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"

// A: (M,K) row-major, or (K,M) when TA; B: (K,N) row-major, or (N,K) when TB;
// C: (M,N) row-major. C = op(A) @ op(B).
// Launch: block ((BM/TM)*(BN/TN)); grid (ceil(N/BN), ceil(M/BM)).
template <int BM, int BN, int BK, int TM, int TN, bool TA = false, bool TB = false>
__global__ void sgemm_2d_blocktiling(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                                     float* __restrict__ C) {
  constexpr int THREADS = (BM / TM) * (BN / TN);  // one thread per TM x TN tile of C
  static_assert(BM % TM == 0 && BN % TN == 0, "the thread tiles cover the block tile exactly");
  static_assert(THREADS <= 1024, "CUDA's block size limit");
  __shared__ float As[BM][BK];  // As: (BM, BK) shared, As[r][k] = op(A)[row0 + r, k0 + k]
  __shared__ float Bs[BK][BN];  // Bs: (BK, BN) shared, Bs[k][c] = op(B)[k0 + k, col0 + c]
  const int t = threadIdx.x;
  const int tc = t % (BN / TN);  // this thread's tile is rows tr*TM.., columns tc*TN.. of the block tile
  const int tr = t / (BN / TN);
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM][TN] = {};  // acc: (TM, TN) registers, C[row0 + tr*TM + i, col0 + tc*TN + j]
  float regM[TM];          // regM: (TM) registers, As[tr*TM + i][k] for the current k
  float regN[TN];          // regN: (TN) registers, Bs[k][tc*TN + j] for the current k
  for (int k0 = 0; k0 < K; k0 += BK) {
    // As in v4: THREADS at a time, consecutive threads on consecutive stored
    // addresses, zeros past the edges.
    for (int i = t; i < BM * BK; i += THREADS) {
      const int ar = TA ? i % BM : i / BK, ak = TA ? i / BM : i % BK;
      As[ar][ak] = row0 + ar < M && k0 + ak < K ? A[index_of<TA>(row0 + ar, k0 + ak, M, K)] : 0.0f;
    }
    for (int i = t; i < BK * BN; i += THREADS) {
      const int bk = TB ? i % BK : i / BN, bc = TB ? i / BK : i % BN;
      Bs[bk][bc] = k0 + bk < K && col0 + bc < N ? B[index_of<TB>(k0 + bk, col0 + bc, K, N)] : 0.0f;
    }
    __syncthreads();  // the tiles are complete before anyone reads them
    for (int k = 0; k < BK; ++k) {
      // An outer product of regM and regN: TM + TN shared loads, TM * TN FMAs.
      for (int i = 0; i < TM; ++i) regM[i] = As[tr * TM + i][k];
      for (int j = 0; j < TN; ++j) regN[j] = Bs[k][tc * TN + j];
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] += regM[i] * regN[j];
    }
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }
  for (int i = 0; i < TM; ++i) {
    const int r = row0 + tr * TM + i;
    for (int j = 0; j < TN; ++j) {
      const int c = col0 + tc * TN + j;
      if (r < M && c < N) C[r * N + c] = acc[i][j];
    }
  }
}
