// The second half of a deterministic split reduction (matmul v10's split-K,
// conv wgrad v2 and v3, the bias gradient v3): blocks have summed separate
// slices of a long reduction into partials part[z], and this adds them up in
// a fixed order, so every output is the same sum in the same order on every
// run, whatever order the blocks of the first kernel ran in (atomicAdd into
// the output would not be).
//
// Few outputs and many splits is the case that needs care: conv wgrad of
// LeNet-5's conv1 has 150 outputs and about 264 splits. One thread per
// output would put the whole sum on 150 threads of one block, each walking
// 264 dependent loads (11 us on an H200, 2026-11-30, for a few KB). So the
// block is two-dimensional: G groups of X threads (X·G = kSumThreads), group
// g summing the splits z ≡ g (mod G) in z order, then group 0 adding the G
// partial sums in g order — still one fixed order for given (splits, G).
// G comes from the sizes alone (sum_splits_groups), so a problem is always
// summed the same way.
#pragma once
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/in_flight.hpp"

namespace warpnet {
inline namespace WARPNET_KERNEL_COPY {

constexpr int kSumThreads = 256;  // threads per block, X·G
constexpr int kSumMaxGroups = 8;  // X stays >= 32: a warp reads one 128-byte row of a split

// G: a power of two, at most kSumMaxGroups, each group summing at least 8
// splits (fewer, and the groups' partials would cost about what they save).
__host__ __device__ constexpr int sum_splits_groups(int splits) {
  int g = 1;
  while (g < kSumMaxGroups && 2 * g * 8 <= splits) g *= 2;
  return g;
}

// The launch for `elements` outputs of `splits` partials each.
struct SumSplitsLaunch {
  dim3 grid, block;
};
inline SumSplitsLaunch sum_splits_launch(int elements, int splits) {
  const int groups = sum_splits_groups(splits), X = kSumThreads / groups;
  return {dim3(unsigned(ceil_div(elements, X))), dim3(unsigned(X), unsigned(groups))};
}

// part: (splits, elements), out: (elements): out[i] = the sum over z of
// part[z][i], group by group as above.
// Launch: sum_splits_launch (BLOCK = kSumThreads): block (BLOCK / G, G),
// G = sum_splits_groups(splits); grid (ceil(elements / (BLOCK / G))).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    sum_splits(int elements, int splits, const float* __restrict__ part, float* __restrict__ out) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, at most 1024 threads");
  __shared__ float group_sums[BLOCK];  // group_sums[g·X + x]: group g's sum for output x of the block
  const int X = blockDim.x, G = blockDim.y, x = threadIdx.x, group = threadIdx.y;
  const int i = blockIdx.x * X + x;  // consecutive threads: consecutive addresses in every split
  // Splits group, group + G, ... in z order, 8 loads in flight (sum_in_order).
  const int mine = i < elements && group < splits ? ceil_div(splits - group, G) : 0;
  float sum = sum_in_order(0.0f, mine, [&](int j) { return part[size_t(group + j * G) * elements + i]; });
  if (G == 1) {  // the same for the whole block: no barrier is skipped by some threads only
    if (i < elements) out[i] = sum;
    return;
  }
  group_sums[group * X + x] = sum;
  __syncthreads();  // every group's sum is stored before group 0 reads them
  if (group == 0 && i < elements) {
    for (int g = 1; g < G; ++g) sum += group_sums[g * X + x];
    out[i] = sum;
  }
}

}  // namespace WARPNET_KERNEL_COPY
}  // namespace warpnet
