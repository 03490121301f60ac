#include "device/kernels/softmax/softmax_registration.hpp"

namespace {
#include "kernels/softmax/03_warp_shuffle.cu"
}  // namespace

namespace warpnet::device::softmax_kernels {
namespace {

const Registration warp_shuffle{Kernel{
    .op = "softmax",
    .version = 3,
    .name = "warp_shuffle",
    .precision = "fp32",
    .shape_text = "block (256), grid (N): a block per row, warp-shuffle reductions",
    .shape = [](const Sizes& s) { return Launch{dim3(N(s)), dim3(256), 0}; },
    .flops = flops,
    // As v2: Z read three times, P written once.
    .bytes = [](const Sizes& s) { return pass_bytes(s, 3); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_softmax(s, l, b, softmax_warp_shuffle<256>); },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::softmax_kernels
