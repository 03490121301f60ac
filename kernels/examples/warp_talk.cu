// Warp talk — lanes reading each other's registers: a shuffle butterfly that
// sums a warp with no shared memory and no barrier, and the votes,
// reductions and matches that answer a question about all 32 lanes at once;
// lesson 03 runs them on the emulator and prints what each lane got.
//
// Idea: the lanes of a warp execute together, so an instruction can hand one
//   lane's register to another. __shfl_xor_sync(mask, v, k) gives each lane
//   the v of lane (its index xor k): with k = 16, 8, 4, 2, 1 every lane adds
//   a partner's partial sum, doubling the values it covers each time, and
//   after five steps every lane holds the whole warp's sum. A shared-memory
//   tree does the same in log2(threads) steps, each a store, a barrier and a
//   load. Votes (__ballot_sync: a bit per lane), integer reductions
//   (__reduce_add_sync and __reduce_max_sync, sm_80: one instruction) and
//   matches (__match_any_sync, sm_70: the lanes holding the same value) turn
//   a per-lane question into one warp-wide answer. A match groups the lanes
//   of a histogram that hold one key, so that one lane adds the group's
//   count: one atomic per key a warp holds instead of one per lane, where
//   a GPU makes the atomics on one address take turns.
// Changed: first version.
// Measured: not measured on a GPU (teaching kernels: the lesson prints the
//   values each lane receives, which any GPU gives alike).
// Run: build/bin/lesson03
#include "kernels/common/cuda_compat.hpp"

// in: (32,) floats, one per lane; steps: (5, 32): each lane's partial sum
// after the exchange with lane ^ 16, ^ 8, ^ 4, ^ 2, ^ 1. One warp.
__global__ void butterfly_sum(const float* __restrict__ in, float* __restrict__ steps) {
  const int lane = threadIdx.x % 32;
  float v = in[lane];
  int step = 0;
  for (int offset = 16; offset > 0; offset /= 2, ++step) {
    v += __shfl_xor_sync(0xffffffffu, v, offset);  // the partner's partial, register to register
    steps[step * 32 + lane] = v;
  }
}

// x: (32,) ints, one per lane; out: (5, 32) unsigned: for each lane, the
// ballot of x > 0 (a bit per lane), how many lanes voted yes (its popcount),
// the warp's sum and maximum of x, and the lanes whose x has the same
// remainder mod 4 as this lane's. One warp.
__global__ void warp_votes(const int* __restrict__ x, unsigned* __restrict__ out) {
  const unsigned all = 0xffffffffu;
  const int lane = threadIdx.x % 32, v = x[lane];
  const unsigned yes = __ballot_sync(all, v > 0);
  out[0 * 32 + lane] = yes;
  out[1 * 32 + lane] = unsigned(__popc(yes));
  out[2 * 32 + lane] = unsigned(__reduce_add_sync(all, v));
  out[3 * 32 + lane] = unsigned(__reduce_max_sync(all, v));
  out[4 * 32 + lane] = __match_any_sync(all, v & 3);  // (v & 3: the remainder, also for negative v)
}

// keys: (n,) ints in [0, bins); counts: (bins,) ints, zeroed. Every thread
// adds 1 to its key's count: one atomic per thread.
__global__ void histogram_per_lane(const int* __restrict__ keys, int* __restrict__ counts, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&counts[keys[i]], 1);
}

// The same counts, the atomics aggregated per warp: the lanes holding one
// key (__match_any_sync) elect the lowest of them, which adds their number.
__global__ void histogram_per_key(const int* __restrict__ keys, int* __restrict__ counts, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32;
  const unsigned present = __ballot_sync(0xffffffffu, i < n);  // every lane votes before those past n leave
  if (i >= n) return;
  const int key = keys[i];
  const unsigned group = __match_any_sync(present, key);
  if (lane == __ffs(int(group)) - 1) atomicAdd(&counts[key], __popc(group));
}
