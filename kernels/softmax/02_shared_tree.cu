// Softmax v2 — a block per row, shared-memory tree reductions.
//
// Idea: give a row BLOCK threads instead of one. Thread t takes columns t,
//   t + BLOCK, t + 2·BLOCK, ...: at each step the lanes of a warp read 32
//   consecutive floats, 4 sectors for 128 bytes, the coalesced pattern. Each
//   thread keeps a partial maximum (then sum); the block combines the BLOCK
//   partials in shared memory as a tree: half the threads add the other
//   half's value to their own, then a quarter, ... log2(BLOCK) steps, each
//   ending in a __syncthreads() so the next step reads finished values.
// Changed from v1: a block per row (N blocks, not N threads: enough to fill
//   a GPU even at N=1), column-strided coalesced loads, two tree reductions.
//   The same three passes over Z, so the same bytes; v4 removes one.
// Cost left: 10 barriers per reduction (one to post, log2(BLOCK) = 8 in the
//   tree, one before the scratch is reused), with fewer threads
//   working at each step (the last 5 steps keep under one warp busy).
// Measured: NVIDIA H200, 2026-11-30, run 2 (bench/results/nvidia-h200-2026-11-30-run2.json,
//   `warpnet bench softmax`; GB/s of the 8 bytes per element a softmax must move):
//   0.208 ms = 2580 GB/s at 65536x1024, 60.9% of the in-run device-to-device copy bandwidth;
//   1.04 ms = 2070 GB/s at 8192x32768, 49.4%.
//   Emulator: `warpnet trace softmax/02 --size 17,1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/row_reduce.hpp"

// The block's reduction of v, left in every thread. shared: (BLOCK) scratch.
template <class Op, int BLOCK>
__device__ float tree_allreduce(float v, float* shared) {
  const int t = threadIdx.x;
  shared[t] = v;
  __syncthreads();  // all BLOCK partials are in
  for (int half = BLOCK / 2; half > 0; half /= 2) {
    if (t < half) shared[t] = Op::apply(shared[t], shared[t + half]);
    __syncthreads();  // this level is finished before the next reads it
  }
  const float result = shared[0];
  __syncthreads();  // everyone has read shared[0] before the scratch is reused
  return result;
}

// Z: (N,C) row-major logits; P: (N,C) row-major probabilities.
// Launch: block (BLOCK); grid (N): block i owns row i.
template <int BLOCK>
__global__ void softmax_shared_tree(int N, int C, const float* __restrict__ Z, float* __restrict__ P) {
  using warpnet::Max, warpnet::Sum;
  static_assert(BLOCK >= 32 && (BLOCK & (BLOCK - 1)) == 0, "a power of two: the tree halves it");
  __shared__ float shared[BLOCK];  // shared: (BLOCK) one partial per thread
  const float* z = Z + size_t(blockIdx.x) * C;  // z: (C) this block's row
  float* p = P + size_t(blockIdx.x) * C;        // p: (C)
  float m = Max::identity();  // pass 1: each thread's maximum, then the row's
  for (int j = threadIdx.x; j < C; j += BLOCK) m = fmaxf(m, z[j]);
  m = tree_allreduce<Max, BLOCK>(m, shared);
  float s = 0.0f;  // pass 2: the sum of exp(z - m)
  for (int j = threadIdx.x; j < C; j += BLOCK) s += expf(z[j] - m);
  s = tree_allreduce<Sum, BLOCK>(s, shared);
  const float inv = 1.0f / s;  // pass 3: normalize
  for (int j = threadIdx.x; j < C; j += BLOCK) p[j] = expf(z[j] - m) * inv;
}
