#include "device/kernels/reduce/reduce_registration.hpp"

namespace {
#include "kernels/reduce/04_vectorized.cu"
}  // namespace

namespace warpnet::device::reduce_kernels {
namespace {

constexpr int kBlock = 256;

int group(const Sizes& s) { return float4_lanes_per_row(C(s)); }

// The instance for G lanes per row, G one of 1, 2, ..., 32.
template <class Op>
ReduceKernel instance(int g) {
  switch (g) {
    case 1: return reduce_vectorized<Op, kBlock, 1>;
    case 2: return reduce_vectorized<Op, kBlock, 2>;
    case 4: return reduce_vectorized<Op, kBlock, 4>;
    case 8: return reduce_vectorized<Op, kBlock, 8>;
    case 16: return reduce_vectorized<Op, kBlock, 16>;
    default: return reduce_vectorized<Op, kBlock, 32>;
  }
}

// Version 4 of the op `op` ("sum_rows" with Sum, "max_rows" with Max).
template <class Op>
Kernel vectorized(const char* op) {
  return Kernel{
      .op = op,
      .version = 4,
      .name = "vectorized",
      .precision = "fp32",
      .shape_text = "block (256), grid (ceil(N / (256/G))): G = min(32, pow2 >= C/4) lanes per row, float4 loads",
      .shape = [](const Sizes& s) { return Launch{dim3(ceil_div(N(s), kBlock / group(s))), dim3(kBlock), 0}; },
      .flops = flops,
      .bytes = bytes,
      .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_reduce(s, l, b, instance<Op>(group(s))); },
      .copy = kThisCopy,
  };
}

const Registration sum_rows{vectorized<warpnet::Sum>("sum_rows")};
const Registration max_rows{vectorized<warpnet::Max>("max_rows")};

}  // namespace
}  // namespace warpnet::device::reduce_kernels
