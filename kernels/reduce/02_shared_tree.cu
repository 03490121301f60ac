// Row reduction v2 — a block per row, a shared-memory tree.
//
// Idea: BLOCK threads per row. Thread t folds columns t, t + BLOCK, ...:
//   each step a warp reads 32 consecutive floats (4 sectors for 128 bytes,
//   coalesced). Then the block combines its BLOCK partials in shared memory
//   as a tree: the lower half folds in the upper half, log2(BLOCK) levels,
//   a __syncthreads() after each so the next level reads finished values.
// Changed from v1: a block per row (N blocks: enough work even at N=1),
//   coalesced column-strided loads, the tree.
// Cost left: 9 barriers for BLOCK=256 (one after the partials, 8 in the
//   tree), and the last 5 levels keep less than
//   a warp busy.
// Measured: not yet measured on a GPU. Emulator: `warpnet trace sum_rows/02 --size 17,1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/row_reduce.hpp"

// X: (N,C) row-major; Y: (N), Y[i] = Op over row i of X.
// Launch: block (BLOCK); grid (N): block i owns row i.
template <class Op, int BLOCK>
__global__ void reduce_shared_tree(int N, int C, const float* __restrict__ X, float* __restrict__ Y) {
  static_assert(BLOCK >= 32 && (BLOCK & (BLOCK - 1)) == 0, "a power of two: the tree halves it");
  __shared__ float shared[BLOCK];               // shared: (BLOCK) one partial per thread
  const float* x = X + size_t(blockIdx.x) * C;  // x: (C) this block's row
  const int t = threadIdx.x;
  float acc = Op::identity();  // threads past a short row keep the identity
  for (int j = t; j < C; j += BLOCK) acc = Op::apply(acc, x[j]);
  shared[t] = acc;
  __syncthreads();  // all BLOCK partials are in
  for (int half = BLOCK / 2; half > 0; half /= 2) {
    if (t < half) shared[t] = Op::apply(shared[t], shared[t + half]);
    __syncthreads();  // this level is finished before the next reads it
  }
  if (t == 0) Y[blockIdx.x] = shared[0];
}
