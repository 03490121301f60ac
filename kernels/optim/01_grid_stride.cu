// Optimizer updates v1 — fused SGD-momentum and Adam, a grid-stride loop.
//
// Idea: an optimizer step touches every parameter once and does a handful
//   of FLOPs per element, so it is a stream: SGD with momentum reads w, v, g
//   and writes w, v (20 bytes per element), Adam reads w, m, v, g and writes
//   w, m, v (28 bytes). Done as separate elementwise ops (v = μ·v + g, then
//   w -= lr·v, ...) each pass would re-read what the previous one wrote; one
//   fused kernel moves every byte once. The loop is elementwise/01's: thread
//   t takes elements t, t + gridDim·blockDim, ..., a warp touches 32
//   consecutive floats of each tensor per step (coalesced), and the grid is
//   capped near one wave of resident threads.
//   The hyperparameters sit in a small device buffer, read once per thread
//   (a broadcast from cache), not in kernel arguments: a learning-rate
//   schedule (or Adam's bias correction, which changes every step) then
//   writes 12 or 16 bytes to that buffer, and a captured CUDA graph replays
//   the same launch unchanged.
// In place: each thread reads w[i], v[i] (and m[i]) before it writes
//   w_out[i], v_out[i] (m_out[i]), and no thread touches another's i, so the
//   caller may pass the same pointer for w and w_out, v and v_out, m and
//   m_out — the usual case, a step updates the parameters where they live.
//   Those pointers are therefore NOT __restrict__ (a restrict promise that
//   w and w_out never overlap would let the compiler reorder a store before
//   a load of the same address); g and hyper are only read and overlap no
//   output, so they may be.
// Arithmetic: the formulas of cpu::sgd_momentum_update and cpu::adam_update
//   (src/cpu/optim.cpp), in the same order, in fp32.
// Changed: first version.
// Measured: not yet measured on a GPU. Emulator: `warpnet trace adam/01 --size 1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"

// w, v, g, w_out, v_out: (n) fp32; hyper: (3) = {lr, momentum, weight_decay}.
// v_out = μ·v + g + wd·w;  w_out = w − lr·v_out. w_out may be w, v_out may be v.
// Launch: block (BLOCK); any grid: the loop covers every element.
template <int BLOCK>
__global__ void sgd_momentum_grid_stride(int n, const float* w, const float* v, const float* __restrict__ g,
                                         const float* __restrict__ hyper, float* w_out, float* v_out) {
  static_assert(BLOCK % 32 == 0, "whole warps");
  const float lr = hyper[0], mu = hyper[1], wd = hyper[2];
  // size_t: i + stride may pass INT_MAX when n is near it.
  const size_t stride = size_t(gridDim.x) * BLOCK;
  for (size_t i = size_t(blockIdx.x) * BLOCK + threadIdx.x; i < size_t(n); i += stride) {
    const float wi = w[i], vi = v[i];  // both read before either is written
    const float v_new = mu * vi + g[i] + wd * wi;
    v_out[i] = v_new;
    w_out[i] = wi - lr * v_new;
  }
}

// w, m, v, g, w_out, m_out, v_out: (n) fp32; hyper: (4) = {step_size, beta1,
// beta2, eps_hat}, the bias corrections folded in on the host (nn::Adam::step).
// m_out = β1·m + (1−β1)·g;  v_out = β2·v + (1−β2)·g²;  w_out = w − α·m_out / (√v_out + ε̂).
// w_out may be w, m_out may be m, v_out may be v. Launch: as sgd_momentum_grid_stride.
template <int BLOCK>
__global__ void adam_grid_stride(int n, const float* w, const float* m, const float* v, const float* __restrict__ g,
                                 const float* __restrict__ hyper, float* w_out, float* m_out, float* v_out) {
  static_assert(BLOCK % 32 == 0, "whole warps");
  const float step_size = hyper[0], beta1 = hyper[1], beta2 = hyper[2], eps_hat = hyper[3];
  const size_t stride = size_t(gridDim.x) * BLOCK;
  for (size_t i = size_t(blockIdx.x) * BLOCK + threadIdx.x; i < size_t(n); i += stride) {
    const float wi = w[i], mi = m[i], vi = v[i], gi = g[i];  // all read before any is written
    const float m_new = beta1 * mi + (1.0f - beta1) * gi;
    const float v_new = beta2 * vi + (1.0f - beta2) * gi * gi;
    m_out[i] = m_new;
    v_out[i] = v_new;
    w_out[i] = wi - step_size * m_new / (sqrtf(v_new) + eps_hat);
  }
}
