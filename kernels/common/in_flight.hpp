// Loads kept in flight. A thread that loads a value and uses it at once
// waits a whole memory latency (hundreds of cycles from L2) before its next
// load issues; one that issues several loads first waits once for all of
// them. Where a kernel is small enough that few warps run per SM (LeNet-5's
// layers at batch 64), nothing else hides those waits: a loop of 8 to 40
// dependent load-then-use steps per thread was most of such a kernel's time.
// These helpers load kLoadsInFlight values before they use any.
#pragma once
#include "kernels/common/cuda_compat.hpp"

namespace warpnet {
inline namespace WARPNET_KERNEL_COPY {

constexpr int kLoadsInFlight = 8;

// acc + term(0) + term(1) + ... + term(count − 1), added in that order: the
// same bits as a plain loop, the terms loaded kLoadsInFlight at a time.
// term is called once for each j, in increasing order (so it may carry an
// index forward instead of dividing).
template <class Term>
__device__ __forceinline__ float sum_in_order(float acc, int count, Term&& term) {
  for (int j0 = 0; j0 < count; j0 += kLoadsInFlight) {
    float t[kLoadsInFlight];
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u) t[u] = j0 + u < count ? term(j0 + u) : 0.0f;
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u)
      if (j0 + u < count) acc += t[u];
  }
  return acc;
}

}  // namespace WARPNET_KERNEL_COPY
}  // namespace warpnet
