// Optimizer updates v2 — float4: four elements per thread per iteration.
//
// Idea: elementwise/02's step applied to the fused updates. v1 is already
//   coalesced, but it issues one 4-byte memory instruction per tensor and
//   element: 5 per element for SGD, 7 for Adam. Moving a float4 (16 bytes)
//   per instruction cuts that by four and keeps four times the bytes in
//   flight per thread, which is what hides DRAM latency in a stream.
// Changed from v1: the grid strides over n/4 float4s; the last n % 4
//   elements (at most 3) go to the grid's first threads as scalars. A float4
//   must be 16-byte aligned; when any pointer is not (a view into the middle
//   of a flat parameter buffer) the kernel runs v1's scalar loop over all n —
//   the same bytes.
// In place, as v1: a thread loads its four w (v, m) values before it stores
//   the four new ones, and no two threads share an element, so w_out may be
//   w (and v_out v, m_out m). Those pointers are not __restrict__; g and
//   hyper, never written, are.
// Measured: not yet measured on a GPU. Emulator: `warpnet trace adam/02 --size 1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"

using warpnet::aligned16;  // whether p sits on a 16-byte boundary, as a float4 access requires

// One SGD-momentum element (v1's arithmetic); writes the new v to v_new.
__device__ __forceinline__ float sgd_element(float w, float v, float g, float lr, float mu, float wd, float& v_new) {
  v_new = mu * v + g + wd * w;
  return w - lr * v_new;
}

// Elements [0, n) of one tensor, as thread t of `stride` threads: whole
// float4s while every pointer allows them, then the last n % 4 elements (or
// all n when a pointer is unaligned) one per thread. v2's kernel hands it
// the whole tensor and grid, v3's (03_multi_tensor.cu) one chunk and block.
__device__ __forceinline__ void sgd_momentum_span(size_t n, const float* w, const float* v,
                                                  const float* __restrict__ g, float* w_out, float* v_out, float lr,
                                                  float mu, float wd, size_t t, size_t stride) {
  using warpnet::load_float4, warpnet::store_float4;
  // n4: elements covered by whole float4s when every pointer allows them, else none.
  const bool aligned = aligned16(w) && aligned16(v) && aligned16(g) && aligned16(w_out) &&
                       aligned16(v_out);
  const size_t n4 = aligned ? n / 4 * 4 : 0;
  for (size_t i = 4 * t; i < n4; i += 4 * stride) {
    const float4 w4 = load_float4(w + i), v4 = load_float4(v + i), g4 = load_float4(g + i);  // elements i .. i+3
    float4 vn;
    const float4 wn = make_float4(sgd_element(w4.x, v4.x, g4.x, lr, mu, wd, vn.x),
                                  sgd_element(w4.y, v4.y, g4.y, lr, mu, wd, vn.y),
                                  sgd_element(w4.z, v4.z, g4.z, lr, mu, wd, vn.z),
                                  sgd_element(w4.w, v4.w, g4.w, lr, mu, wd, vn.w));
    store_float4(v_out + i, vn);
    store_float4(w_out + i, wn);
  }
  for (size_t i = n4 + t; i < n; i += stride) {
    float vn;
    const float wn = sgd_element(w[i], v[i], g[i], lr, mu, wd, vn);
    v_out[i] = vn;
    w_out[i] = wn;
  }
}

// w, v, g, w_out, v_out: (n) fp32; hyper: (3) = {lr, momentum, weight_decay}.
// Launch: block (BLOCK); any grid: the loops cover every element.
template <int BLOCK>
__global__ void sgd_momentum_vectorized(int n, const float* w, const float* v, const float* __restrict__ g,
                                        const float* __restrict__ hyper, float* w_out, float* v_out) {
  static_assert(BLOCK % 32 == 0, "whole warps");
  const size_t t = size_t(blockIdx.x) * BLOCK + threadIdx.x, stride = size_t(gridDim.x) * BLOCK;
  sgd_momentum_span(size_t(n), w, v, g, w_out, v_out, hyper[0], hyper[1], hyper[2], t, stride);
}

// One Adam element (v1's arithmetic); writes the new m and v to m_new, v_new.
__device__ __forceinline__ float adam_element(float w, float m, float v, float g, float step_size, float beta1,
                                              float beta2, float eps_hat, float& m_new, float& v_new) {
  m_new = beta1 * m + (1.0f - beta1) * g;
  v_new = beta2 * v + (1.0f - beta2) * g * g;
  return w - step_size * m_new / (sqrtf(v_new) + eps_hat);
}

// Elements [0, n) of one tensor, as thread t of `stride` threads (as
// sgd_momentum_span). All four tensors' elements i .. i+3 are loaded before
// any store.
__device__ __forceinline__ void adam_span(size_t n, const float* w, const float* m, const float* v,
                                          const float* __restrict__ g, float* w_out, float* m_out, float* v_out,
                                          float a, float b1, float b2, float e, size_t t, size_t stride) {
  using warpnet::load_float4, warpnet::store_float4;
  const bool aligned = aligned16(w) && aligned16(m) && aligned16(v) && aligned16(g) &&
                       aligned16(w_out) && aligned16(m_out) && aligned16(v_out);
  const size_t n4 = aligned ? n / 4 * 4 : 0;
  for (size_t i = 4 * t; i < n4; i += 4 * stride) {
    const float4 w4 = load_float4(w + i), m4 = load_float4(m + i), v4 = load_float4(v + i), g4 = load_float4(g + i);
    float4 mn, vn;
    const float4 wn = make_float4(adam_element(w4.x, m4.x, v4.x, g4.x, a, b1, b2, e, mn.x, vn.x),
                                  adam_element(w4.y, m4.y, v4.y, g4.y, a, b1, b2, e, mn.y, vn.y),
                                  adam_element(w4.z, m4.z, v4.z, g4.z, a, b1, b2, e, mn.z, vn.z),
                                  adam_element(w4.w, m4.w, v4.w, g4.w, a, b1, b2, e, mn.w, vn.w));
    store_float4(m_out + i, mn);
    store_float4(v_out + i, vn);
    store_float4(w_out + i, wn);
  }
  for (size_t i = n4 + t; i < n; i += stride) {
    float mn, vn;
    const float wn = adam_element(w[i], m[i], v[i], g[i], a, b1, b2, e, mn, vn);
    m_out[i] = mn;
    v_out[i] = vn;
    w_out[i] = wn;
  }
}

// w, m, v, g, w_out, m_out, v_out: (n) fp32; hyper: (4) = {step_size, beta1,
// beta2, eps_hat}. Launch: as sgd_momentum_vectorized.
template <int BLOCK>
__global__ void adam_vectorized(int n, const float* w, const float* m, const float* v, const float* __restrict__ g,
                                const float* __restrict__ hyper, float* w_out, float* m_out, float* v_out) {
  static_assert(BLOCK % 32 == 0, "whole warps");
  const size_t t = size_t(blockIdx.x) * BLOCK + threadIdx.x, stride = size_t(gridDim.x) * BLOCK;
  adam_span(size_t(n), w, m, v, g, w_out, m_out, v_out, hyper[0], hyper[1], hyper[2], hyper[3], t, stride);
}
