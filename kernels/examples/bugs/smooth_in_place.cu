// Bug example — smoothing an array in place: a thread overwrites a value its
// neighbour still has to read, and the emulator reports the race.
//
// Idea: x[i] becomes the mean of x[i] and x[i + 1], written back into x. Thread
//   i reads x[i + 1], which thread i + 1 overwrites with its own mean. Nothing
//   orders the read before that write: on a GPU, a warp that runs ahead writes
//   the first element of its slice before the last thread of the warp below
//   has read it, and that thread averages a value already smoothed — wrong
//   only at some warp boundaries, on some runs. The emulator runs thread i
//   before thread i + 1 and would get it right every time; its traced build
//   keeps who read each global word since the last barrier, and a write of a
//   word another thread read is a race whatever the order.
// Changed: first version. The fix: read both values, __syncthreads(), then
//   write (within one block), or write into another buffer.
// Measured: nothing to measure; the traced emulator reports a global-memory race.
// Run: build/bin/lesson03
#include "kernels/common/cuda_compat.hpp"

// x: (n,) floats, one block of at least n threads.
__global__ void smooth_in_place(float* __restrict__ x, int n) {
  const int i = threadIdx.x;
  // BUG: thread i + 1 may already have overwritten x[i + 1].
  if (i + 1 < n) x[i] = 0.5f * (x[i] + x[i + 1]);
}
