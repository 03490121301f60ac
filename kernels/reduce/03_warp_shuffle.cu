// Row reduction v3 — warp shuffles: the reduction moves through registers.
//
// Idea: __shfl_xor_sync hands each lane the register of lane (its index xor
//   k); five exchanges (k = 16 .. 1) leave every lane with its warp's result
//   (warp_allreduce, kernels/common/row_reduce.hpp). Shared memory then
//   holds one value per warp, not one per thread, and every warp reduces
//   those BLOCK/32 values with shuffles again (block_allreduce).
// Changed from v2: the shared-memory tree → shuffles: 2 barriers instead of
//   v2's 1 + log2(BLOCK) = 9, BLOCK/32 floats of shared memory instead of
//   BLOCK. The loads
//   are v2's.
// Measured: not yet measured on a GPU. Emulator: `warpnet trace sum_rows/03 --size 17,1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/row_reduce.hpp"

// X: (N,C) row-major; Y: (N), Y[i] = Op over row i of X.
// Launch: block (BLOCK); grid (N): block i owns row i.
template <class Op, int BLOCK>
__global__ void reduce_warp_shuffle(int N, int C, const float* __restrict__ X, float* __restrict__ Y) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, every lane in the shuffles");
  __shared__ float partials[BLOCK / 32];        // partials: (BLOCK/32) one value per warp
  const float* x = X + size_t(blockIdx.x) * C;  // x: (C) this block's row
  // Threads past a short row keep the identity and still shuffle: the
  // shuffles' mask names the whole warp, so no lane may leave early.
  float acc = Op::identity();
  for (int j = threadIdx.x; j < C; j += BLOCK) acc = Op::apply(acc, x[j]);
  acc = warpnet::block_allreduce<Op, BLOCK>(acc, partials);
  if (threadIdx.x == 0) Y[blockIdx.x] = acc;
}
