// SGEMM v2 — global-memory coalescing: the same work as v1, lanes along columns.
//
// Idea: threadIdx.x now picks the column of C, so a warp covers 2 rows x 16
//   columns: it reads 16 consecutive floats of B (2 sectors), writes two runs
//   of 16 floats of C (4 sectors, the minimum) and reads 2 elements of A,
//   each broadcast to 16 lanes. v1 needed 16 sectors for each of A and C.
// Changed from v1: row and column swapped in the thread-to-element mapping.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   25.8 ms = 5.33 TFLOP/s at 4096^3, 10.5% of cuBLAS SGEMM in the same run; 5.05 TFLOP/s at 8192^3, 9.88%.
//   Emulator: `warpnet trace matmul/02_coalesced --size 128,128,128`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"

// A: (M,K) row-major, or (K,M) when TA; B: (K,N) row-major, or (N,K) when TB;
// C: (M,N) row-major. C = op(A) @ op(B).
// Launch: block (16,16); grid (ceil(N/16), ceil(M/16)).
template <bool TA = false, bool TB = false>
__global__ void sgemm_coalesced(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;  // consecutive lanes: consecutive columns
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[index_of<TA>(row, k, M, K)] * B[index_of<TB>(k, col, K, N)];
  C[row * N + col] = acc;
}
