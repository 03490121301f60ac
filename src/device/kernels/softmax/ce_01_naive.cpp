#include "device/kernels/softmax/ce_registration.hpp"

namespace {
#include "kernels/softmax/ce_01_naive.cu"
}  // namespace

namespace warpnet::device::softmax_kernels {
namespace {

const Registration ce_naive{Kernel{
    .op = "softmax_cross_entropy",
    .version = 1,
    .name = "ce_naive",
    .precision = "fp32",
    .shape_text = "block (128), grid (ceil(N/128)): one thread per row, three passes over it, then the loss",
    .shape = [](const Sizes& s) { return Launch{dim3(ceil_div(N(s), 128)), dim3(128), 0}; },
    .flops = ce_flops,
    // Z read three times (max, sum, normalize), P written once; per row the
    // label, z[label] and the loss.
    .bytes = [](const Sizes& s) { return ce_bytes(s, 3); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_ce(s, l, b, softmax_cross_entropy_naive<128>); },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::softmax_kernels
