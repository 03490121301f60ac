// What the direct versions for few channels share (conv v8, dgrad v4): a
// thread keeps one output pixel's channels — up to 8 or 16 — in registers,
// padded to a power of two of "slots", and at each filter tap multiplies one
// input value from shared memory into all of them, the tap's weights read as
// float4s at one address by every lane (a broadcast).
#pragma once
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"

namespace conv_few_channels {

constexpr int kSharedFloats = 48 * 1024 / 4;  // what a block gets without opting in

// The fewest slots (1, 2, 4, 8, 16) that hold n channels.
__host__ __device__ constexpr int slots(int n) { return n <= 1 ? 1 : n <= 2 ? 2 : n <= 4 ? 4 : n <= 8 ? 8 : 16; }

// acc[o] += v · w[o] for the SLOTS weights of one tap (16-byte aligned when SLOTS >= 4).
template <int SLOTS>
__device__ __forceinline__ void multiply_add(float (&acc)[SLOTS], float v, const float* w) {
  if constexpr (SLOTS >= 4) {
#pragma unroll
    for (int o = 0; o < SLOTS; o += 4) {
      const float4 w4 = ::warpnet::load_float4(w + o);
      acc[o] += v * w4.x, acc[o + 1] += v * w4.y, acc[o + 2] += v * w4.z, acc[o + 3] += v * w4.w;
    }
  } else {
#pragma unroll
    for (int o = 0; o < SLOTS; ++o) acc[o] += v * w[o];
  }
}

// visit.template operator()<SLOTS>() for slots(n) (n at most 16).
template <class Visit>
auto with_slots(int n, Visit&& visit) {
  switch (slots(n)) {
    case 1: return visit.template operator()<1>();
    case 2: return visit.template operator()<2>();
    case 4: return visit.template operator()<4>();
    case 8: return visit.template operator()<8>();
    default: return visit.template operator()<16>();
  }
}

}  // namespace conv_few_channels
