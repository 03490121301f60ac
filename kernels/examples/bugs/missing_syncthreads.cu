// Bug example — a missing __syncthreads(): the emulator reports a race.
//
// Idea: each block reverses its slice of `in` through shared memory. Thread t
//   writes tile[t] and reads tile[n-1-t], which another thread writes: without
//   a barrier between the two, the read may come first (on a GPU it depends
//   on warp scheduling; in the traced emulator it is always reported).
// Changed: first version. The fixed kernel adds __syncthreads() where marked.
// Measured: nothing to measure; the traced emulator reports a shared-memory race.
// Run: build/bin/test_simt -tc="*race*"
#include "kernels/common/cuda_compat.hpp"

// in, out: (gridDim.x * blockDim.x,) floats; blockDim.x <= 256.
__global__ void reverse_missing_sync(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float tile[256];
  const int t = threadIdx.x, n = blockDim.x, base = blockIdx.x * n;
  tile[t] = in[base + t];
  // BUG: a __syncthreads() belongs here.
  out[base + t] = tile[n - 1 - t];
}
