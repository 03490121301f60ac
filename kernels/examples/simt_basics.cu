// SIMT basics — who a thread is, and what a warp does at a branch; lesson 03
// runs these on the emulator and prints what they show.
//
// Idea: every thread runs the same function; blockIdx/threadIdx tell it which
//   part of the work is its own. Threads 32 at a time form a warp, which
//   issues one instruction for all its lanes: when lanes disagree at a branch
//   the warp runs both sides, one after the other, each with part of its lanes.
// Changed: first version.
// Measured: not measured on a GPU yet (teaching kernels; the emulator's trace
//   counts the lanes that sit out).
// Run: build/bin/lesson03
#include "kernels/common/cuda_compat.hpp"

// ids: (threads, 4) ints, one row per thread of the grid: block, thread, warp, lane.
__global__ void whoami(int* ids) {
  const int thread = threadIdx.x;
  const int global = blockIdx.x * blockDim.x + thread;
  int* row = ids + 4 * global;
  row[0] = blockIdx.x;
  row[1] = thread;
  row[2] = thread / warpSize;  // warps are formed from consecutive threads of a block
  row[3] = thread % warpSize;
}

// evens, odds: (n/2,) floats. Even threads fill `evens`, odd ones `odds`:
// each branch's store runs with half of the warp's lanes active.
__global__ void divergent_halves(float* evens, float* odds, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (i % 2 == 0)
    evens[i / 2] = float(i);
  else
    odds[i / 2] = -float(i);
}
