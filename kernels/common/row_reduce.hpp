// Reductions along the rows of a matrix, shared by the softmax and reduce
// ladders (kernels/softmax/, kernels/reduce/): the two operations, as types a
// kernel takes as a template parameter, the warp and block reductions that
// version 03 of each ladder introduces, and the one-barrier block reduction
// of softmax v06.
#pragma once
#include <cmath>

#include "kernels/common/cuda_compat.hpp"

namespace warpnet {
inline namespace WARPNET_KERNEL_COPY {

// An associative, commutative operation with its identity: what every
// reduction below needs. The identity pads lanes and threads that hold no
// element (a row shorter than the block), so it must not change the result.
struct Sum {
  static __device__ __forceinline__ float identity() { return 0.0f; }
  static __device__ __forceinline__ float apply(float a, float b) { return a + b; }
};
struct Max {
  // -inf, not 0 and not the first element: a row of negative numbers, or a
  // thread with no element of a short row, must not win.
  static __device__ __forceinline__ float identity() { return -INFINITY; }
  static __device__ __forceinline__ float apply(float a, float b) { return fmaxf(a, b); }
};

constexpr unsigned kFullWarp = 0xffffffffu;

// How many lanes share a row of `cols` floats when each lane reads float4s:
// the smallest power of two with 4·lanes >= cols, at most a warp. The launch
// rule of softmax v05 (and v06 up to 128 columns) and reduce v04, whose
// kernels take it as their template parameter G.
constexpr int float4_lanes_per_row(int cols) {
  int lanes = 1;
  while (lanes < 32 && 4 * lanes < cols) lanes *= 2;
  return lanes;
}

// The butterfly: after log2(WIDTH) exchanges every lane of each aligned group
// of WIDTH lanes holds the group's reduction of v (all of them, not only lane
// 0, so no broadcast follows). At step `offset` lane l adds the value of lane
// l ^ offset; no shared memory, no barrier. Every lane of the warp must call
// it (the full mask): kernels keep lanes without data alive, holding the identity.
template <class Op, int WIDTH = 32>
__device__ __forceinline__ float warp_allreduce(float v) {
  static_assert(WIDTH >= 1 && WIDTH <= 32 && (WIDTH & (WIDTH - 1)) == 0, "a power-of-two group of lanes");
  for (int offset = WIDTH / 2; offset > 0; offset /= 2) v = Op::apply(v, __shfl_xor_sync(kFullWarp, v, offset, WIDTH));
  return v;
}

// block_allreduce (below) without its second barrier, for a `partials` array
// this call alone writes in the kernel: nothing overwrites the partials
// later, so no thread need wait until all have read them. A kernel making
// several reductions gives each its own array (BLOCK/32 floats apiece) and
// pays one barrier per reduction instead of two. Every thread of the block
// must call it.
template <class Op, int BLOCK>
__device__ __forceinline__ float block_allreduce_once(float v, float* partials) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps; at most 32 of them");
  constexpr int WARPS = BLOCK / 32;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_allreduce<Op>(v);
  if (lane == 0) partials[warp] = v;
  __syncthreads();  // every warp's partial is posted
  return warp_allreduce<Op>(lane < WARPS ? partials[lane] : Op::identity());
}

// Every thread of a BLOCK-thread block gets the block's reduction of v: each
// warp reduces with shuffles, lane 0 of each posts its result in `partials`
// (BLOCK/32 floats of shared memory, the caller's), and then every warp
// reduces those few partials itself, again with shuffles: two barriers, and
// 2 · log2(32) = 10 shuffle steps (the second round is a whole warp's
// butterfly, whatever BLOCK/32 is) instead of log2(BLOCK) barriers.
// `partials` may be reused by the next call. Every thread of the block must call it.
template <class Op, int BLOCK>
__device__ __forceinline__ float block_allreduce(float v, float* partials) {
  v = block_allreduce_once<Op, BLOCK>(v, partials);
  __syncthreads();  // everyone has read the partials before a next call overwrites them
  return v;
}

}  // namespace WARPNET_KERNEL_COPY
}  // namespace warpnet
