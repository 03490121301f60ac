// The elementwise activations and their local backwards, as functor types an
// elementwise kernel takes as a template parameter (kernels/elementwise/): one
// loop per access pattern, any activation inside it. Each backward sits beside
// its forward and takes the forward's input x, as the CPU's does
// (src/cpu/elementwise.cpp).
#pragma once
#include <cmath>

#include "kernels/common/cuda_compat.hpp"

namespace warpnet {
inline namespace WARPNET_KERNEL_COPY {

// y = max(x, 0). Exact: y is x or 0.
struct Relu {
  __device__ __forceinline__ float operator()(float x) const { return x > 0.0f ? x : 0.0f; }
};
// dx = dy where x > 0, else 0: the kink at 0 takes gradient 0, as PyTorch's does.
struct ReluBackward {
  __device__ __forceinline__ float operator()(float x, float dy) const { return x > 0.0f ? dy : 0.0f; }
};

// GELU, tanh form: y = 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³).
struct Gelu {
  static constexpr float kScale = 0.7978845608028654f;  // √(2/π)
  static constexpr float kCubic = 0.044715f;
  __device__ __forceinline__ float operator()(float x) const {
    const float u = kScale * (x + kCubic * x * x * x);
    return 0.5f * x * (1.0f + tanhf(u));
  }
};
// dx = dy·(0.5·(1 + t) + 0.5·x·(1 − t²)·√(2/π)·(1 + 3·0.044715·x²)), t = tanh(u).
struct GeluBackward {
  __device__ __forceinline__ float operator()(float x, float dy) const {
    const float u = Gelu::kScale * (x + Gelu::kCubic * x * x * x);
    const float t = tanhf(u);
    const float du = Gelu::kScale * (1.0f + 3.0f * Gelu::kCubic * x * x);
    return dy * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du);
  }
};

}  // namespace WARPNET_KERNEL_COPY
}  // namespace warpnet
