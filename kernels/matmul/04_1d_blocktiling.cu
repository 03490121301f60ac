// SGEMM v4 — 1D block tiling: each thread computes a column of TM outputs of C.
//
// Idea: in v3 every multiply-add needs two shared-memory loads (one of As, one
//   of Bs), so shared memory, not arithmetic, sets the pace. Here a thread
//   owns TM vertically adjacent outputs: per k it loads one Bs value into a
//   register and reuses it for TM multiply-adds, each against one As value —
//   (TM + 1) shared loads per TM FMAs, 1.125 per FMA at TM = 8 instead of 2.
//   The As loads are broadcasts: a warp's 32 lanes share their row of threads
//   (BN >= 32), so all read the same As word. The block tile grows to
//   BM x BN = 64 x 64 with a thin BK = 8 slice of K per step, which also
//   halves global traffic per FMA against v3's 16 x 16 tiles.
// Changed from v3: TM results per thread (a register array), a 64 x 64 block
//   tile with BK = 8, a 1-D block of BM*BN/TM = 512 threads that loads both
//   tiles with a strided loop.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   8.74 ms = 15.7 TFLOP/s at 4096^3, 30.9% of cuBLAS SGEMM in the same run; 15.5 TFLOP/s at 8192^3, 30.3%.
//   Emulator: `warpnet trace matmul/04_1d_blocktiling --size 128,128,128`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"

// A: (M,K) row-major, or (K,M) when TA; B: (K,N) row-major, or (N,K) when TB;
// C: (M,N) row-major. C = op(A) @ op(B).
// Launch: block (BM*BN/TM); grid (ceil(N/BN), ceil(M/BM)).
template <int BM, int BN, int BK, int TM, bool TA = false, bool TB = false>
__global__ void sgemm_1d_blocktiling(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                                     float* __restrict__ C) {
  constexpr int THREADS = BM * BN / TM;  // one thread per column segment of TM outputs
  static_assert(BM % TM == 0, "a thread's TM rows lie inside the block tile");
  static_assert(THREADS <= 1024, "CUDA's block size limit");
  __shared__ float As[BM][BK];  // As: (BM, BK) shared, As[r][k] = op(A)[row0 + r, k0 + k]
  __shared__ float Bs[BK][BN];  // Bs: (BK, BN) shared, Bs[k][c] = op(B)[k0 + k, col0 + c]
  const int t = threadIdx.x;
  const int tc = t % BN;  // this thread's column of the tile; consecutive lanes, consecutive columns
  const int tr = t / BN;  // and its group of TM rows: tr*TM .. tr*TM + TM-1
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM] = {};  // acc: (TM) registers, C[row0 + tr*TM + i, col0 + tc]
  for (int k0 = 0; k0 < K; k0 += BK) {
    // BM*BK and BK*BN elements, THREADS at a time. Consecutive threads read
    // consecutive stored addresses: along k for a row-major A, along rows for
    // a stored-transposed one (likewise for B). Past an edge: zeros, so the
    // products there add nothing.
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
      const float b = Bs[k][tc];  // one load, reused TM times
      for (int i = 0; i < TM; ++i) acc[i] += As[tr * TM + i][k] * b;
    }
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }
  for (int i = 0; i < TM; ++i) {
    const int r = row0 + tr * TM + i, c = col0 + tc;
    if (r < M && c < N) C[r * N + c] = acc[i];
  }
}
