#include "device/kernels/reduce/bias_backward_registration.hpp"

namespace {
#include "kernels/reduce/bias_backward_02_block_per_channel.cu"
}  // namespace

namespace warpnet::device::reduce_kernels {
namespace {

const Registration bias_backward_block_registration{Kernel{
    .op = "bias_add_backward",
    .version = 2,
    .name = "bias_backward_block_per_channel",
    .precision = "fp32",
    .shape_text = "block (256), grid (C): a block per channel, coalesced along S, warp-shuffle block reduction",
    .shape = [](const Sizes& s) { return Launch{dim3(bias_C(s)), dim3(256), 0}; },
    .flops = bias_backward_flops,
    // As v1: dY read once, db written once; coalesced when S >= 32.
    .bytes = bias_backward_bytes,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_bias_backward(s, l, b, bias_backward_block_per_channel<256>);
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::reduce_kernels
