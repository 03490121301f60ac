// SGEMM v1 — naive: one thread computes one element of C.
//
// Idea: thread (x, y) walks row y of A and column x of B. threadIdx.x maps to
//   the column, so the 32 lanes of a warp read 32 consecutive floats of B and
//   write 32 consecutive floats of C (coalesced), while all of them read the
//   same element of A (a broadcast).
// Changed: first version.
// Measured: not yet measured on a GPU. Emulator (CPU): see bench/emu_sgemm.
// Run: build/bin/test_simt -tc="sgemm*"
#include "kernels/common/cuda_compat.hpp"

// A: (M,K) row-major; B: (K,N) row-major; C: (M,N) row-major. C = A @ B.
// Launch: block (16,16); grid (ceil(N/16), ceil(M/16)).
__global__ void sgemm_naive(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}
