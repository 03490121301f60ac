#include "device/kernels/softmax/softmax_registration.hpp"

namespace {
#include "kernels/softmax/05_vectorized.cu"
}  // namespace

namespace warpnet::device::softmax_kernels {
namespace {

constexpr int kBlock = 256;

int group(const Sizes& s) { return float4_lanes_per_row(C(s)); }

// The instance for G lanes per row, G one of 1, 2, ..., 32.
SoftmaxKernel instance(int g) {
  switch (g) {
    case 1: return softmax_vectorized<kBlock, 1>;
    case 2: return softmax_vectorized<kBlock, 2>;
    case 4: return softmax_vectorized<kBlock, 4>;
    case 8: return softmax_vectorized<kBlock, 8>;
    case 16: return softmax_vectorized<kBlock, 16>;
    default: return softmax_vectorized<kBlock, 32>;
  }
}

const Registration vectorized{Kernel{
    .op = "softmax",
    .version = 5,
    .name = "vectorized",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N / (256/G))): G = min(32, pow2 >= C/4) lanes per row, "
                  "float4 loads and stores, online pass",
    .shape = [](const Sizes& s) { return Launch{dim3(ceil_div(N(s), kBlock / group(s))), dim3(kBlock), 0}; },
    .flops = flops,
    // As v4: Z read twice, P written once, a quarter of the instructions.
    .bytes = [](const Sizes& s) { return pass_bytes(s, 2); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_softmax(s, l, b, instance(group(s))); },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::softmax_kernels
