// Elementwise v1 — a grid-stride loop: one element per thread per iteration.
//
// Idea: y[i] = f(x[i]) (or dx[i] = f(x[i], dy[i]) for a backward) has no
//   reuse at all, so the kernel's whole job is to stream bytes: 8 per element
//   forward, 12 backward, and the only figure that matters is the fraction of
//   DRAM bandwidth reached. Thread t of the grid handles elements t,
//   t + gridDim·blockDim, t + 2·gridDim·blockDim, ...: at each step the 32
//   lanes of a warp touch 32 consecutive floats, 128 bytes, four full 32-byte
//   sectors (perfect coalescing). The grid is capped (kMaxBlocks in the
//   registration) at about one wave of resident threads, so a 64M-element
//   tensor is not 262144 blocks that each live for one load, and the same
//   kernel is correct for any n and any grid.
// Changed: first version. F is the activation (kernels/common/activations.hpp),
//   so ReLU, GELU, sigmoid, tanh, their backwards and mul share this one loop.
// Measured: not yet measured on a GPU. Emulator: `warpnet trace relu/01 --size 1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/activations.hpp"
#include "kernels/common/cuda_compat.hpp"

// x, y: (n) fp32. Launch: block (BLOCK); any grid: the loop covers every element.
template <int BLOCK, class F>
__global__ void unary_grid_stride(int n, const float* __restrict__ x, float* __restrict__ y) {
  static_assert(BLOCK % 32 == 0, "whole warps");
  const F f;
  // size_t: i + stride may pass INT_MAX when n is near it.
  const size_t stride = size_t(gridDim.x) * BLOCK;
  for (size_t i = size_t(blockIdx.x) * BLOCK + threadIdx.x; i < size_t(n); i += stride) y[i] = f(x[i]);
}

// x, dy, dx: (n) fp32; dx = f(x, dy), the backward of an activation at x
// (x is the forward's output y for sigmoid and tanh; for mul, f(a, b) = a·b).
// Launch: as unary_grid_stride.
template <int BLOCK, class F>
__global__ void binary_grid_stride(int n, const float* __restrict__ x, const float* __restrict__ dy,
                                   float* __restrict__ dx) {
  static_assert(BLOCK % 32 == 0, "whole warps");
  const F f;
  const size_t stride = size_t(gridDim.x) * BLOCK;
  for (size_t i = size_t(blockIdx.x) * BLOCK + threadIdx.x; i < size_t(n); i += stride) dx[i] = f(x[i], dy[i]);
}

// y = x + b broadcast along axis 1. x, y: (N,C,S) fp32, S = H·W (1 for an
// (N,C) matrix); b: (C). Launch: as unary_grid_stride. Element i of the flat
// tensor is in channel (i / S) % C: one integer division per element, and the
// 32 lanes of a warp read at most a few distinct b[c] (one when S >= 32), so
// b's loads hit the cache and x and y carry the DRAM traffic.
template <int BLOCK>
__global__ void bias_add_grid_stride(int N, int C, int S, const float* __restrict__ x, const float* __restrict__ b,
                                     float* __restrict__ y) {
  static_assert(BLOCK % 32 == 0, "whole warps");
  const size_t n = size_t(N) * C * S, stride = size_t(gridDim.x) * BLOCK;
  for (size_t i = size_t(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += stride) y[i] = x[i] + b[i / S % C];
}
