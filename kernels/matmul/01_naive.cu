// SGEMM v1 — naive: one thread computes one element of C.
//
// Idea: thread (x, y) of the grid computes C[x, y]: it walks row x of A and
//   column y of B. This is the loop a CPU programmer writes first, with the
//   two outer loops handed to threads. threadIdx.x picks the row, so with
//   16x16 blocks a warp covers 16 rows x 2 columns of C: each load of A
//   touches 16 rows (16 32-byte sectors for 16 floats) and each store of C
//   writes 32 floats spread over 16 sectors, where 4 would hold them.
// Changed: first version.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   142 ms = 0.966 TFLOP/s at 4096^3, 1.90% of cuBLAS SGEMM in the same run; 0.981 TFLOP/s at 8192^3, 1.92%.
//   Emulator: `warpnet trace matmul/01_naive --size 128,128,128`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"

// A: (M,K) row-major, or (K,M) when TA; B: (K,N) row-major, or (N,K) when TB;
// C: (M,N) row-major. C = op(A) @ op(B), op = transpose when the flag is set.
// Launch: block (16,16); grid (ceil(M/16), ceil(N/16)).
template <bool TA = false, bool TB = false>
__global__ void sgemm_naive(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;  // consecutive lanes: consecutive rows
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[index_of<TA>(row, k, M, K)] * B[index_of<TB>(k, col, K, N)];
  C[row * N + col] = acc;
}
