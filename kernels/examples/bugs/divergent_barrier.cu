// Bug example — __syncthreads() inside a branch only some threads take:
// the barrier can never complete. The emulator reports a deadlock naming the
// waiting and the exited threads instead of hanging.
//
// Idea: CUDA requires every thread of the block to reach the same
//   __syncthreads(). Here the first half of the block waits for a second half
//   that has already returned; on a GPU that hangs or silently misbehaves.
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
