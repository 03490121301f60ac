// Bug example — an off-by-one bounds check: the emulator reports the
// out-of-bounds access with the allocation it overran.
//
// Idea: the grid is rounded up to whole blocks, so threads past the end must
//   do nothing; `i <= n` lets thread n touch x[n], one float past the buffer:
//   `x[i] *= a` reads it before it writes it. A GPU often does not notice.
// Changed: first version. The fix is `i < n`.
// Measured: nothing to measure; the traced emulator reports that 4-byte read.
// Run: build/bin/test_simt -tc="*off-by-one*"
#include "kernels/common/cuda_compat.hpp"

// x: (n,) floats, scaled in place by a.
__global__ void scale_off_by_one(float* __restrict__ x, int n, float a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) x[i] *= a;  // BUG: i < n
}

// One block of 32 threads; out: (32,). Thread t stores into tile[t + 1]:
// thread 31 writes just past the shared array.
__global__ void shared_off_by_one(float* __restrict__ out) {
  __shared__ float tile[32];
  const int t = threadIdx.x;
  tile[t + 1] = float(t);  // BUG: tile[t]
  __syncthreads();
  out[t] = tile[t];
}
