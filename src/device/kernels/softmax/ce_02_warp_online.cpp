#include "device/kernels/softmax/ce_registration.hpp"

namespace {
#include "kernels/softmax/ce_02_warp_online.cu"
}  // namespace

namespace warpnet::device::softmax_kernels {
namespace {

constexpr int kBlock = 256;  // 8 warps, 8 rows per block

const Registration ce_warp_online{Kernel{
    .op = "softmax_cross_entropy",
    .version = 2,
    .name = "ce_warp_online",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N/8)): a warp per row, one online pass for (max, sum), shuffle "
                  "merges, one pass to write",
    .shape = [](const Sizes& s) { return Launch{dim3(ceil_div(N(s), kBlock / 32)), dim3(kBlock), 0}; },
    .flops = ce_flops,
    // Z read twice (online max and sum, then normalize), P written once; per
    // row the label, z[label] and the loss.
    .bytes = [](const Sizes& s) { return ce_bytes(s, 2); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_ce(s, l, b, softmax_cross_entropy_warp_online<kBlock>);
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::softmax_kernels
