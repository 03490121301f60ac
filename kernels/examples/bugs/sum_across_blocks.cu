// Bug example — blocks adding their partial sums to one total with a plain
// `+=`: the emulator reports the race between blocks.
//
// Idea: each block sums its slice of `x` in shared memory, then its thread 0
//   adds the block's sum to `*total`. `*total += s` is a load and a store: two
//   blocks running at once on two SMs both load the old total and one store
//   overwrites the other, so a GPU loses partial sums, more of them the more
//   blocks run together. The emulator runs the blocks one after another and
//   would get the right total; its traced build keeps which blocks touched
//   each global byte in a launch, and a byte one block wrote and another
//   reads is a race whatever the order.
// Changed: first version. The fix is `atomicAdd(total, s)`, or (the same sum
//   on every run) each block writing its own partial and a second kernel
//   adding them in order (kernels/common/sum_splits.hpp).
// Measured: nothing to measure; the traced emulator reports a global-memory race between blocks.
// Run: build/bin/test_simt -tc="*between blocks*"
#include "kernels/common/cuda_compat.hpp"

// x: (n,) floats, total: one float, zeroed before the launch; blockDim.x <= 1024.
__global__ void sum_across_blocks(const float* __restrict__ x, float* __restrict__ total, int n) {
  __shared__ float s;
  if (threadIdx.x == 0) s = 0.0f;
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&s, x[i]);  // within the block: shared-memory atomics
  __syncthreads();
  // BUG: blocks race here; atomicAdd(total, s) is the fix.
  if (threadIdx.x == 0) *total += s;
}
