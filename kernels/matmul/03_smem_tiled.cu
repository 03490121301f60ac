// SGEMM v3 — shared-memory tiling: a block stages TILE x TILE tiles of A and
// B in shared memory and every thread reuses them TILE times.
//
// Idea: v2 reads each element of A and B from global memory N (resp. M) times.
//   Here a block of TILE x TILE threads loads one tile of A and one of B
//   (one float per thread, coalesced), waits at a barrier, and accumulates
//   TILE products from shared memory; global traffic drops by a factor TILE.
// Changed from v2: As/Bs tiles, two __syncthreads() per k-step, zero padding
//   at the edges so any M, N, K works.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   16.9 ms = 8.12 TFLOP/s at 4096^3, 16.0% of cuBLAS SGEMM in the same run; 8.13 TFLOP/s at 8192^3, 15.9%.
//   Emulator (CPU): see bench/emu_sgemm.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"

// A: (M,K) row-major, or (K,M) when TA; B: (K,N) row-major, or (N,K) when TB;
// C: (M,N) row-major. C = op(A) @ op(B).
// Launch: block (TILE,TILE); grid (ceil(N/TILE), ceil(M/TILE)).
template <int TILE, bool TA = false, bool TB = false>
__global__ void sgemm_smem_tiled(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                                 float* __restrict__ C) {
  static_assert(TILE * TILE <= 1024, "one thread per tile element");
  __shared__ float As[TILE][TILE];  // As[r][k] = op(A)[tile row r, k0 + k]
  __shared__ float Bs[TILE][TILE];  // Bs[k][c] = op(B)[k0 + k, tile col c]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  // Each thread loads one element of each tile. Consecutive lanes (tx) must
  // read consecutive addresses: along k for a row-major A, along rows for a
  // stored-transposed one, so the roles of tx and ty follow the layout.
  const int ar = TA ? tx : ty, ak = TA ? ty : tx;
  const int bk = TB ? tx : ty, bc = TB ? ty : tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ar][ak] = (row0 + ar < M && k0 + ak < K) ? A[index_of<TA>(row0 + ar, k0 + ak, M, K)] : 0.0f;
    Bs[bk][bc] = (k0 + bk < K && col0 + bc < N) ? B[index_of<TB>(k0 + bk, col0 + bc, K, N)] : 0.0f;
    __syncthreads();  // the tiles are complete before anyone reads them
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }
  if (row0 + ty < M && col0 + tx < N) C[(row0 + ty) * N + col0 + tx] = acc;
}
