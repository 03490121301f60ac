// Peak v1 — FP32 FFMA fed from shared memory with matmul v09's 8x8 thread
// tile: the ceiling of v09's inner loop.
//
// Idea: 512 threads own the block's 128x256 tile as 8x8 pieces (64 fp32
//   accumulators each, as in v09). Per k a thread reads 8 values of A's
//   column and 8 of B's row from shared memory — 2 + 2 float4 loads
//   (LDS.128) — and issues 8 x 8 = 64 FFMA: v09's 4 loads per 64 FMAs. No
//   global memory, no barrier, no address arithmetic beyond the loop's: what
//   is left is the FFMA pipe and the loads that feed it. Its rate against the
//   datasheet's FP32 peak and cuBLAS's SGEMM says how much of v09's distance
//   to cuBLAS lies in its inner loop, and how much outside it.
// Layout: A is stored transposed in shared memory (As[k][m]), so a thread's 8
//   rows of one k are two adjacent float4; B as it is (Bs[k][n]). With COLS
//   columns a thread, the TN / COLS threads of a row group take columns
//   4*c + (TN / (COLS / 4)) * q + 0..3 (c the thread's place in the group,
//   q = 0..COLS/4-1): consecutive threads read consecutive float4 of a B row
//   (the fewest wavefronts a 16-byte load can take), and the threads of a row
//   group read the same two A float4 (a broadcast).
// Changed: first version.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-peak.json, `warpnet bench peak`):
//   84.6 ms = 53.6 TFLOP/s at 1056 blocks x 4096 repeats, 80.2% of the datasheet's FP32 peak.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace peak/01 --size 2,3
#include "kernels/common/float4_rows.hpp"
#include "kernels/peak/peak_tile.hpp"

namespace peak_ffma {
__device__ __forceinline__ void unpack(float4 v, float* out) { out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w; }
}  // namespace peak_ffma

// A: (128,16) row-major fp32; B: (16,256) row-major fp32; C: (gridDim.x,128,256),
// C[b] = repeats * (A @ B). Launch: block (THREADS), grid (blocks); 24 KiB
// static shared. A thread owns 8 rows x COLS columns: THREADS * 8 * COLS = 128 * 256.
template <int THREADS, int COLS>
__global__ void __launch_bounds__(THREADS, 1)
    peak_ffma_smem(int repeats, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
  using namespace peak_tile;
  using peak_ffma::unpack;
  constexpr int GROUP = TN / COLS, STRIDE = 4 * GROUP, Q = COLS / 4;  // threads per row group; float4s a thread
  static_assert(THREADS * 8 * COLS == TM * TN && COLS % 4 == 0, "8 x COLS per thread covers the tile");
  __shared__ __align__(16) float As[TK][TM];  // A transposed
  __shared__ __align__(16) float Bs[TK][TN];
  // Staged once, outside the timed loop: the transposing stores conflict, and no repeat pays for it.
  for (int i = threadIdx.x; i < TM * TK; i += THREADS) As[i % TK][i / TK] = A[i];  // A[m][k], i = 16m + k
  for (int i = threadIdx.x; i < TK * TN; i += THREADS) Bs[i / TN][i % TN] = B[i];
  __syncthreads();

  const int m0 = 8 * (threadIdx.x / GROUP), n0 = 4 * (threadIdx.x % GROUP);
  float acc[8][COLS] = {};  // acc[i][4q + e]: C row m0 + i, column n0 + STRIDE*q + e
  for (int r = 0; r < repeats; ++r) {
    reload_from_shared();
#pragma unroll
    for (int k = 0; k < TK; ++k) {
      float a[8], b[COLS];
#pragma unroll
      for (int q = 0; q < 2; ++q) unpack(warpnet::load_float4(&As[k][m0 + 4 * q]), a + 4 * q);
#pragma unroll
      for (int q = 0; q < Q; ++q) unpack(warpnet::load_float4(&Bs[k][n0 + STRIDE * q]), b + 4 * q);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < COLS; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  }

  float* c = C + size_t(blockIdx.x) * TM * TN;
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int q = 0; q < Q; ++q)
      warpnet::store_float4(&c[(m0 + i) * TN + n0 + STRIDE * q],
                            make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]));
}
