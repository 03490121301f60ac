#include "device/kernels/softmax/softmax_registration.hpp"

namespace {
#include "kernels/softmax/02_shared_tree.cu"
}  // namespace

namespace warpnet::device::softmax_kernels {
namespace {

const Registration shared_tree{Kernel{
    .op = "softmax",
    .version = 2,
    .name = "shared_tree",
    .precision = "fp32",
    .shape_text = "block (256), grid (N): a block per row, shared-memory tree reductions",
    .shape = [](const Sizes& s) { return Launch{dim3(N(s)), dim3(256), 0}; },
    .flops = flops,
    // As v1: Z read three times, P written once, now coalesced.
    .bytes = [](const Sizes& s) { return pass_bytes(s, 3); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_softmax(s, l, b, softmax_shared_tree<256>); },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::softmax_kernels
