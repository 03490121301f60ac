// The elementwise activations and their local backwards, as functor types an
// elementwise kernel takes as a template parameter (kernels/elementwise/): one
// loop per access pattern, any activation inside it. Each backward sits beside
// its forward and takes what the CPU's does (src/cpu/elementwise.cpp): the
// forward's input x for ReLU and GELU, its output y for sigmoid and tanh,
// whose derivatives are cheapest from y. Mul, the product of two tensors (the
// backward of dropout, dy ⊙ mask), is a functor of two operands like them.
#pragma once
#include <cmath>

#include "kernels/common/cuda_compat.hpp"

namespace warpnet {
inline namespace WARPNET_KERNEL_COPY {

// y = x: what a kernel with an activation parameter does without one (bias_add).
struct Identity {
  __device__ __forceinline__ float operator()(float x) const { return x; }
};
// y = max(x, 0), exact (y is x or 0), a NaN passing through as in PyTorch
// (x > 0 ? x : 0 would turn it into 0 and hide a diverged pre-activation).
struct Relu {
  __device__ __forceinline__ float operator()(float x) const { return !(x <= 0.0f) ? x : 0.0f; }
};
// dx = 0 where x <= 0, else dy: the kink at 0 takes gradient 0, and a NaN x
// passes dy on, as PyTorch's threshold_backward does (src/cpu/elementwise.cpp).
struct ReluBackward {
  __device__ __forceinline__ float operator()(float x, float dy) const { return x <= 0.0f ? 0.0f : dy; }
};

// GELU, tanh form (PyTorch's approximate='tanh'): y = 0.5·x·(1 + tanh(u)),
// u = √(2/π)·(x + 0.044715·x³); −0 where tanh(u) is −1 (at −inf the product
// would be NaN), as the CPU's (src/cpu/elementwise.cpp).
struct Gelu {
  static constexpr float kScale = 0.7978845608028654f;  // √(2/π)
  static constexpr float kCubic = 0.044715f;
  __device__ __forceinline__ float operator()(float x) const {
    const float u = kScale * (x + kCubic * x * x * x);
    const float h = 1.0f + tanhf(u);
    return h == 0.0f ? -0.0f : 0.5f * x * h;
  }
};
// dx = dy·(0.5·(1 + t) + 0.5·x·(1 − t²)·√(2/π)·(1 + 3·0.044715·x²)), t = tanh(u);
// the second term left out where t is ±1 (there it is 0, and x² may be inf).
struct GeluBackward {
  __device__ __forceinline__ float operator()(float x, float dy) const {
    const float u = Gelu::kScale * (x + Gelu::kCubic * x * x * x);
    const float t = tanhf(u);
    const float s = 1.0f - t * t;
    const float du = Gelu::kScale * (1.0f + 3.0f * Gelu::kCubic * x * x);
    return dy * (0.5f * (1.0f + t) + (s == 0.0f ? 0.0f : 0.5f * x * s * du));
  }
};

// The logistic function y = 1/(1 + e^-x), with the CPU's two forms: with
// e = e^-|x| <= 1, y = 1/(1 + e) for x >= 0 and e/(1 + e) for x < 0, so
// nothing overflows (e^-x alone is inf for x < -88.7 in fp32). Written
// without branches around one expf and one division, so the lanes of a warp
// holding x of both signs run the same instructions (the CPU's two branches
// give the same values: e^-|x| is its expf(-x) or expf(x)). The numerator,
// 1 or e, is max(e, [x >= 0]) as e <= 1: a max, where a ?: of two values
// g++ compiles (for the emulator) into two paths, each with its own store.
struct Sigmoid {
  __device__ __forceinline__ float operator()(float x) const {
    const float e = expf(-fabsf(x));
    return fmaxf(e, x >= 0.0f ? 1.0f : 0.0f) / (1.0f + e);
  }
};
// dx = dy·y·(1 − y), from the forward's output y.
struct SigmoidBackward {
  __device__ __forceinline__ float operator()(float y, float dy) const { return dy * y * (1.0f - y); }
};

// y = tanh(x).
struct Tanh {
  __device__ __forceinline__ float operator()(float x) const { return tanhf(x); }
};
// dx = dy·(1 − y²), from the forward's output y.
struct TanhBackward {
  __device__ __forceinline__ float operator()(float y, float dy) const { return dy * (1.0f - y * y); }
};

// The elementwise product a·b: one correctly rounded multiply.
struct Mul {
  __device__ __forceinline__ float operator()(float a, float b) const { return a * b; }
};
// The elementwise sum a + b (gradients accumulating): one correctly rounded add.
struct Add {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};

}  // namespace WARPNET_KERNEL_COPY
}  // namespace warpnet
