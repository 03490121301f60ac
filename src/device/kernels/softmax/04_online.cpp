#include "device/kernels/softmax/softmax_registration.hpp"

namespace {
#include "kernels/softmax/04_online.cu"
}  // namespace

namespace warpnet::device::softmax_kernels {
namespace {

const Registration online{Kernel{
    .op = "softmax",
    .version = 4,
    .name = "online",
    .precision = "fp32",
    .shape_text = "block (256), grid (N): a block per row, one online pass for (max, sum), one to write",
    .shape = [](const Sizes& s) { return Launch{dim3(N(s)), dim3(256), 0}; },
    .flops = flops,
    // Z read twice (online max and sum, then normalize), P written once.
    .bytes = [](const Sizes& s) { return pass_bytes(s, 2); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_softmax(s, l, b, softmax_online<256>); },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::softmax_kernels
