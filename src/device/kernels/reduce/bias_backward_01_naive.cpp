#include "device/kernels/reduce/bias_backward_registration.hpp"

namespace {
#include "kernels/reduce/bias_backward_01_naive.cu"
}  // namespace

namespace warpnet::device::reduce_kernels {
namespace {

const Registration bias_backward_naive_registration{Kernel{
    .op = "bias_add_backward",
    .version = 1,
    .name = "bias_backward_naive",
    .precision = "fp32",
    .shape_text = "block (128), grid (ceil(C/128)): one thread per channel, looping over N and S",
    .shape = [](const Sizes& s) { return Launch{dim3(ceil_div(bias_C(s), 128)), dim3(128), 0}; },
    .flops = bias_backward_flops,
    // The same bytes as v2; coalesced when S = 1, 8x the sectors otherwise.
    .bytes = bias_backward_bytes,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_bias_backward(s, l, b, bias_backward_naive<128>);
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::reduce_kernels
