// SGEMM v2 — shared-memory tiling: a block stages TILE x TILE tiles of A and
// B in shared memory and every thread reuses them TILE times.
//
// Idea: v1 reads each element of A and B from global memory N (resp. M) times.
//   Here a block of TILE x TILE threads loads one tile of A and one of B
//   (one float per thread, coalesced), waits at a barrier, and accumulates
//   TILE products from shared memory; global traffic drops by a factor TILE.
// Changed from v1: As/Bs tiles, two __syncthreads() per k-step, zero padding
//   at the edges so any M, N, K works.
// Measured: not yet measured on a GPU. Emulator (CPU): see bench/emu_sgemm.
// Run: build/bin/test_simt -tc="sgemm*"
#include "kernels/common/cuda_compat.hpp"

// A: (M,K) row-major; B: (K,N) row-major; C: (M,N) row-major. C = A @ B.
// Launch: block (TILE,TILE); grid (ceil(N/TILE), ceil(M/TILE)).
template <int TILE>
__global__ void sgemm_smem_tiled(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                                 float* __restrict__ C) {
  static_assert(TILE * TILE <= 1024, "one thread per tile element");
  __shared__ float As[TILE][TILE];  // As[r][k] = A[tile row r, k0 + k]
  __shared__ float Bs[TILE][TILE];  // Bs[k][c] = B[k0 + k, tile col c]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();  // the tiles are complete before anyone reads them
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
