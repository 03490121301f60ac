// Peak v1 — FP32 FFMA fed from shared memory: the ceiling of a CUDA-core
// SGEMM's inner loop (matmul v05-v10) at 128 accumulators a thread.
//
// Idea: a thread owns an 8x16 piece of the block's 128x256 tile (128 fp32
//   accumulators). Per k it reads 8 values of A's column and 16 of B's row
//   from shared memory — 2 + 4 float4 loads (LDS.128) — and issues 8 x 16 =
//   128 FFMA: 6 loads per 128 FMAs, against the 4 per 64 of matmul v09's
//   8x8 thread tile (64 accumulators). No global memory, no barrier, no
//   address arithmetic beyond the loop's: what is left is the FFMA pipe and
//   the loads that feed it. Its rate against the datasheet's FP32 peak and
//   against cuBLAS's SGEMM says how far a CUDA-core GEMM with this thread
//   tile could go at all, and so how much of v09's distance to cuBLAS lies
//   outside its inner loop.
// Layout: A is stored transposed in shared memory (As[k][m]), so a thread's 8
//   rows of one k are two adjacent float4; B as it is (Bs[k][n]). Thread t
//   takes rows 8*(t/16).. and columns 4*(t%16) + 64*q + 0..3 (q = 0..3): the
//   16 threads of a half warp read 16 consecutive float4 of a B row (256 bytes,
//   one wavefront) and the other half warp the same (a broadcast); A's
//   float4s are two addresses per warp, broadcast too.
// Changed: first version.
// Measured: not yet measured on a GPU.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace peak/01 --size 2,3
#include "kernels/common/float4_rows.hpp"
#include "kernels/peak/peak_tile.hpp"

namespace peak_v1 {
__device__ __forceinline__ void unpack(float4 v, float* out) { out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w; }
}  // namespace peak_v1

// A: (128,16) row-major fp32; B: (16,256) row-major fp32; C: (gridDim.x,128,256),
// C[b] = repeats * (A @ B). Launch: block (256), grid (blocks); 24 KiB static shared.
__global__ void __launch_bounds__(peak_tile::THREADS, 1)
    peak_ffma_smem(int repeats, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
  using namespace peak_tile;
  using peak_v1::unpack;
  __shared__ __align__(16) float As[TK][TM];  // A transposed
  __shared__ __align__(16) float Bs[TK][TN];
  for (int i = threadIdx.x; i < TM * TK; i += THREADS) As[i % TK][i / TK] = A[i];  // A[m][k], i = 16m + k
  for (int i = threadIdx.x; i < TK * TN; i += THREADS) Bs[i / TN][i % TN] = B[i];
  __syncthreads();

  const int m0 = 8 * (threadIdx.x / 16), n0 = 4 * (threadIdx.x % 16);
  float acc[8][16] = {};  // acc[i][4q + e]: C row m0 + i, column n0 + 64q + e
  for (int r = 0; r < repeats; ++r) {
    reload_from_shared();
#pragma unroll
    for (int k = 0; k < TK; ++k) {
      float a[8], b[16];
#pragma unroll
      for (int q = 0; q < 2; ++q) unpack(warpnet::load_float4(&As[k][m0 + 4 * q]), a + 4 * q);
#pragma unroll
      for (int q = 0; q < 4; ++q) unpack(warpnet::load_float4(&Bs[k][n0 + 64 * q]), b + 4 * q);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 16; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  }

  float* c = C + size_t(blockIdx.x) * TM * TN;
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int q = 0; q < 4; ++q)
      warpnet::store_float4(&c[(m0 + i) * TN + n0 + 64 * q],
                            make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]));
}
