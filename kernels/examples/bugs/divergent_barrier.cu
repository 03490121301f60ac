// Bug example — __syncthreads() inside a branch only some threads take. The
// emulator stops the launch, naming the waiting and the exited threads.
//
// Idea: CUDA allows __syncthreads() only in code every thread of the block
//   reaches (the Programming Guide: a condition around it must be the same for
//   the whole block). Here the first half of the block waits for a second half
//   that has already returned. A GPU releases a barrier that only exited
//   threads hold up (PTX's exit), so this one finishes there — but with the
//   other half still running (a loop of its own, another barrier) it would
//   not. The emulator holds kernels to the rule.
// Changed: first version. The fix hoists the barrier out of the branch.
// Measured: nothing to measure; the emulator reports cudaErrorLaunchTimeout.
// Run: build/bin/test_simt -tc="*deadlock*"
#include "kernels/common/cuda_compat.hpp"

// data: (blockDim.x,) floats.
__global__ void divergent_barrier(float* __restrict__ data) {
  const int t = threadIdx.x;
  if (t < int(blockDim.x) / 2) {
    data[t] *= 2.0f;
    __syncthreads();  // BUG: the other half never gets here
    data[t] += data[t + blockDim.x / 2];
  }
}
