// Bug example — reading shared memory no thread wrote: the emulator reports
// an uninitialized read with the thread and the byte.
//
// Idea: shared memory starts with whatever the previous block left there.
//   Here only even threads fill their slot, yet every thread reads its own.
// Changed: first version. The fix writes every slot (or reads only even ones).
// Measured: nothing to measure; the traced emulator reports the read.
// Run: build/bin/test_simt -tc="*uninitialized*"
#include "kernels/common/cuda_compat.hpp"

// One block; out: (blockDim.x,) floats, blockDim.x <= 64.
__global__ void uninitialized_shared(float* __restrict__ out) {
  __shared__ float tile[64];
  const int t = threadIdx.x;
  if (t % 2 == 0) tile[t] = float(t);
  __syncthreads();
  out[t] = tile[t];  // BUG: odd t reads a word nobody wrote
}
