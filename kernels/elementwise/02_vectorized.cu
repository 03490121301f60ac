// Elementwise v2 — float4: four elements per thread per iteration, a scalar tail.
//
// Idea: v1 is already perfectly coalesced, but every 4-byte load and store is
//   one instruction, and one memory instruction per 4 bytes keeps the
//   load/store units and the issue slots busier than the DRAM. Here each
//   thread moves a float4 (16 bytes) per instruction: a warp asks for 512
//   contiguous bytes at once, a quarter of v1's memory instructions for the
//   same bytes, and more bytes in flight per thread to hide DRAM latency.
// Changed from v1: the grid strides over n/4 float4s; the last n % 4 elements
//   (at most 3) go to the grid's first threads as scalars. A float4 must be
//   16-byte aligned; when a pointer is not (a view into the middle of a
//   buffer) the kernel falls back to v1's scalar loop — the same bytes.
// Measured: not benchmarked alone on a GPU; its launches in LeNet-5's training
//   step on an H200 are profiled in bench/results/logs/ncu-lenet5-nvidia-h200-2026-12-04-run2.csv
//   (Nsight Compute, 2026-12-04). Emulator: `warpnet trace relu/02 --size 1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/activations.hpp"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"

using warpnet::aligned16;  // whether p sits on a 16-byte boundary, as a float4 access requires

// x, y: (n) fp32. Launch: block (BLOCK); any grid: the loops cover every
// element. Launched with launch_dependent_kernel (cuda_compat.hpp), as
// device::launch_floor's chain of ReLUs is.
template <int BLOCK, class F>
__global__ void unary_vectorized(int n, const float* __restrict__ x, float* __restrict__ y) {
  using warpnet::load_float4, warpnet::store_float4;
  static_assert(BLOCK % 32 == 0, "whole warps");
  warpnet::allow_dependent_grids();  // a programmatic dependent launch may start the next kernel now
  warpnet::wait_for_prior_grids();   // and this one's loads wait for the last kernel's results

  const F f;
  const size_t t = size_t(blockIdx.x) * BLOCK + threadIdx.x, stride = size_t(gridDim.x) * BLOCK;
  // n4: elements covered by whole float4s when the pointers allow them, else none.
  const size_t n4 = aligned16(x) && aligned16(y) ? size_t(n) / 4 * 4 : 0;
  for (size_t i = 4 * t; i < n4; i += 4 * stride) {
    const float4 v = load_float4(x + i);  // v: x[i .. i+3]
    store_float4(y + i, make_float4(f(v.x), f(v.y), f(v.z), f(v.w)));
  }
  // The tail: the n % 4 elements past n4 (or all n when unaligned), one per thread.
  for (size_t i = n4 + t; i < size_t(n); i += stride) y[i] = f(x[i]);
}

// x, dy, dx: (n) fp32; dx = f(x, dy) (x is y for sigmoid's and tanh's
// backward; a for mul). Launch: as unary_vectorized.
template <int BLOCK, class F>
__global__ void binary_vectorized(int n, const float* __restrict__ x, const float* __restrict__ dy,
                                  float* __restrict__ dx) {
  using warpnet::load_float4, warpnet::store_float4;
  static_assert(BLOCK % 32 == 0, "whole warps");
  const F f;
  const size_t t = size_t(blockIdx.x) * BLOCK + threadIdx.x, stride = size_t(gridDim.x) * BLOCK;
  const size_t n4 = aligned16(x) && aligned16(dy) && aligned16(dx) ? size_t(n) / 4 * 4 : 0;
  for (size_t i = 4 * t; i < n4; i += 4 * stride) {
    const float4 v = load_float4(x + i), g = load_float4(dy + i);  // v: x[i .. i+3], g: dy[i .. i+3]
    store_float4(dx + i, make_float4(f(v.x, g.x), f(v.y, g.y), f(v.z, g.z), f(v.w, g.w)));
  }
  for (size_t i = n4 + t; i < size_t(n); i += stride) dx[i] = f(x[i], dy[i]);
}

// y = f(x + b), b broadcast along axis 1. x, y: (N,C,S) fp32, S = H·W; b:
// (C). F = Identity is bias_add; F = Relu is bias_relu, the bias and the
// ReLU after it fused: one pass over the activation instead of two (x read
// and y written once, not x, then the sum, read and written again), and one
// launch instead of two.
// Launch: as unary_vectorized. The four elements of a float4 share a channel
// only when S % 4 == 0; in general each takes its own (i / S) % C, so b stays
// four scalar loads (from cache) while x and y move as float4s.
template <int BLOCK, class F = warpnet::Identity>
__global__ void bias_add_vectorized(int N, int C, int S, const float* __restrict__ x, const float* __restrict__ b,
                                    float* __restrict__ y) {
  using warpnet::load_float4, warpnet::store_float4;
  static_assert(BLOCK % 32 == 0, "whole warps");
  const F f;
  const size_t n = size_t(N) * C * S;
  const size_t t = size_t(blockIdx.x) * BLOCK + threadIdx.x, stride = size_t(gridDim.x) * BLOCK;
  const size_t n4 = aligned16(x) && aligned16(y) ? n / 4 * 4 : 0;
  for (size_t i = 4 * t; i < n4; i += 4 * stride) {
    const float4 v = load_float4(x + i);  // v: x[i .. i+3], flat
    store_float4(y + i, make_float4(f(v.x + b[(i + 0) / S % C]), f(v.y + b[(i + 1) / S % C]),
                                    f(v.z + b[(i + 2) / S % C]), f(v.w + b[(i + 3) / S % C])));
  }
  for (size_t i = n4 + t; i < n; i += stride) y[i] = f(x[i] + b[i / S % C]);
}
