#include "device/kernels/softmax/softmax_registration.hpp"

namespace {
#include "kernels/softmax/01_naive.cu"
}  // namespace

namespace warpnet::device::softmax_kernels {
namespace {

const Registration naive{Kernel{
    .op = "softmax",
    .version = 1,
    .name = "naive",
    .precision = "fp32",
    .shape_text = "block (128), grid (ceil(N/128)): one thread per row, three passes over it",
    .shape = [](const Sizes& s) { return Launch{dim3(ceil_div(N(s), 128)), dim3(128), 0}; },
    .flops = flops,
    // Z read three times (max, sum, normalize), P written once.
    .bytes = [](const Sizes& s) { return pass_bytes(s, 3); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_softmax(s, l, b, softmax_naive<128>); },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::softmax_kernels
