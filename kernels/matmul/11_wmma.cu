// GEMM v11 — tensor cores through nvcuda::wmma: fp16 (or bf16) inputs, fp32 accumulation.
//
// Idea: a tensor core multiplies a 16x16 by a 16x16 tile in one warp-wide
//   instruction (4096 multiply-adds). A block of 4 warps owns a 32x32 tile of
//   C; per 16-wide step of K it stages A (32x16) and B (16x32) in shared
//   memory and each warp issues one wmma::mma_sync on its 16x16 quarter. The
//   result goes through shared memory so the edges of C can be guarded: any
//   M, N, K works (tiles are zero-padded).
// Changed from v3 (the shared-memory tiling it builds on): A and B are 16-bit
//   in memory (half the bytes of fp32); the inner product runs on tensor
//   cores, products exact, sums in fp32.
// Measured: not measured on a GPU yet. Emulator: the registry test runs it.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/wmma.hpp"

// A: (M,K) row-major T, or (K,M) when TA; B: (K,N) row-major T, or (N,K)
// when TB; C: (M,N) row-major fp32. C = op(A) @ op(B).
// Launch: block (128); grid (ceil(N/32), ceil(M/32)). T: __half or __nv_bfloat16.
template <class T, bool TA = false, bool TB = false>
__global__ void gemm_wmma(int M, int N, int K, const T* __restrict__ A, const T* __restrict__ B,
                          float* __restrict__ C) {
  namespace wmma = nvcuda::wmma;
  constexpr int TILE = 32, STEP = 16;
  // Rows padded by 8 elements (16 bytes): wmma wants ldm a multiple of 16 bytes
  // and 32-byte-aligned tile pointers; the padding also spreads rows over banks.
  __shared__ __align__(32) T As[TILE][STEP + 8];     // As[r][k] = op(A)[row0 + r, k0 + k]
  __shared__ __align__(32) T Bs[STEP][TILE + 8];     // Bs[k][c] = op(B)[k0 + k, col0 + c]
  __shared__ __align__(32) float Cs[TILE][TILE + 4];  // the block's C tile on its way out
  const int t = threadIdx.x, warp = t / 32;
  const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  const int wr = (warp / 2) * 16, wc = (warp % 2) * 16;  // this warp's 16x16 quarter
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k0 = 0; k0 < K; k0 += STEP) {
    for (int i = t; i < TILE * STEP; i += blockDim.x) {  // 512 elements of each tile, 4 per thread
      // Consecutive threads read consecutive stored addresses: along k for a
      // row-major A, along rows for a stored-transposed one (likewise for B).
      const int ar = TA ? i % TILE : i / STEP, ak = TA ? i / TILE : i % STEP;
      const int bk = TB ? i % STEP : i / TILE, bc = TB ? i / STEP : i % TILE;
      As[ar][ak] = row0 + ar < M && k0 + ak < K ? A[index_of<TA>(row0 + ar, k0 + ak, M, K)] : T(0.0f);
      Bs[bk][bc] = k0 + bk < K && col0 + bc < N ? B[index_of<TB>(k0 + bk, col0 + bc, K, N)] : T(0.0f);
    }
    __syncthreads();  // the tiles are complete before any warp loads fragments
    wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b;
    wmma::load_matrix_sync(a, &As[wr][0], STEP + 8);
    wmma::load_matrix_sync(b, &Bs[0][wc], TILE + 8);
    wmma::mma_sync(acc, a, b, acc);
    __syncthreads();  // every warp is done with the tiles before they are overwritten
  }
  wmma::store_matrix_sync(&Cs[wr][wc], acc, TILE + 4, wmma::mem_row_major);
  __syncthreads();
  for (int i = t; i < TILE * TILE; i += blockDim.x) {
    const int r = i / TILE, c = i % TILE;
    if (row0 + r < M && col0 + c < N) C[(row0 + r) * N + col0 + c] = Cs[r][c];
  }
}
