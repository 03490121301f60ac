// Bug example — a tree reduction without its __syncthreads(): the emulator
// reports the race on the partial sum that one step writes and the next reads.
//
// Idea: each block sums its 2^k floats in shared memory, halving the active
//   threads each step: thread t adds sdata[t + s] into sdata[t]. The next step
//   reads sdata[t + s/2], which another thread has just written — or not yet,
//   without a barrier between the steps (on a GPU it depends on warp scheduling;
//   within one warp too: lanes of a warp are not in lockstep since Volta).
//   `sdata[t] += sdata[t + s]` is a load and a store of sdata[t]: the race is
//   on the store, which the traced build sees since it uses GCC's -fsanitize=thread
//   instrumentation (see src/simt/README.md, "Limits").
// Changed: first version. reduce_sum is the fixed kernel: the barrier where marked.
// Measured: nothing to measure; the traced emulator reports a shared-memory race.
// Run: build/bin/test_simt -tc="*reduction*"
#include "kernels/common/cuda_compat.hpp"

// in: (gridDim.x * blockDim.x,) floats, out: (gridDim.x,); blockDim.x a power of two <= 256.
__global__ void reduce_missing_sync(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float sdata[256];
  const int tid = threadIdx.x;
  sdata[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    // BUG: a __syncthreads() belongs here.
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// The same reduction, correct: every step ends with a barrier.
__global__ void reduce_sum(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float sdata[256];
  const int tid = threadIdx.x;
  sdata[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
