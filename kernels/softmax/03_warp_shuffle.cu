// Softmax v3 — warp shuffles: the reductions move through registers.
//
// Idea: inside a warp, __shfl_xor_sync(mask, v, k) hands each lane the value
//   of lane (its index xor k), register to register, with no shared memory
//   and no barrier. Five exchanges (k = 16, 8, 4, 2, 1) leave every lane with
//   the warp's result (warp_allreduce, kernels/common/row_reduce.hpp). The
//   block then needs shared memory only for one value per warp: each warp
//   posts its result, and every warp reduces those BLOCK/32 values with
//   shuffles again (block_allreduce): two barriers per reduction, not ten.
// Changed from v2: tree_allreduce → block_allreduce (shuffles); the shared
//   scratch shrinks from BLOCK floats to BLOCK/32. The same three passes
//   over Z, the same bytes; fewer instructions and barriers per reduction.
// Measured: NVIDIA H200, 2026-11-30, run 2 (bench/results/nvidia-h200-2026-11-30-run2.json,
//   `warpnet bench softmax`; GB/s of the 8 bytes per element a softmax must move):
//   0.175 ms = 3060 GB/s at 65536x1024, 72.2% of the in-run device-to-device copy bandwidth;
//   1.04 ms = 2070 GB/s at 8192x32768, 49.4%.
//   Emulator: `warpnet trace softmax/03 --size 17,1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/row_reduce.hpp"

// Z: (N,C) row-major logits; P: (N,C) row-major probabilities.
// Launch: block (BLOCK); grid (N): block i owns row i.
template <int BLOCK>
__global__ void softmax_warp_shuffle(int N, int C, const float* __restrict__ Z, float* __restrict__ P) {
  using warpnet::block_allreduce, warpnet::Max, warpnet::Sum;
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, every lane in the shuffles");
  __shared__ float partials[BLOCK / 32];        // partials: (BLOCK/32) one value per warp
  const float* z = Z + size_t(blockIdx.x) * C;  // z: (C) this block's row
  float* p = P + size_t(blockIdx.x) * C;        // p: (C)
  // Threads past a short row's end keep the identity and still shuffle: a
  // shuffle's mask names the whole warp, so no lane may leave early.
  float m = Max::identity();  // pass 1: the maximum
  for (int j = threadIdx.x; j < C; j += BLOCK) m = fmaxf(m, z[j]);
  m = block_allreduce<Max, BLOCK>(m, partials);
  float s = 0.0f;  // pass 2: the sum of exp(z - m)
  for (int j = threadIdx.x; j < C; j += BLOCK) s += expf(z[j] - m);
  s = block_allreduce<Sum, BLOCK>(s, partials);
  const float inv = 1.0f / s;  // pass 3: normalize
  for (int j = threadIdx.x; j < C; j += BLOCK) p[j] = expf(z[j] - m) * inv;
}
