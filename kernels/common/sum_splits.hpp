// The second half of a deterministic split reduction (conv wgrad v2, the
// bias gradient v3): blocks have summed separate slices of a long reduction
// into partials part[z], and this adds them up in z order, so every output
// is the same sum in the same order on every run, whatever order the blocks
// of the first kernel ran in (atomicAdd into the output would not be).
#pragma once
#include "kernels/common/cuda_compat.hpp"

namespace warpnet {
inline namespace WARPNET_KERNEL_COPY {

// part: (splits, elements), out: (elements): out[i] = part[0][i] + part[1][i]
// + ..., always in that order.
// Launch: block (BLOCK); grid (ceil(elements / BLOCK)).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    sum_splits(int elements, int splits, const float* __restrict__ part, float* __restrict__ out) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, at most 1024 threads");
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // consecutive threads: consecutive addresses in every split
  if (i >= elements) return;
  float sum = 0.0f;
  for (int z = 0; z < splits; ++z) sum += part[size_t(z) * elements + i];
  out[i] = sum;
}

}  // namespace WARPNET_KERNEL_COPY
}  // namespace warpnet
