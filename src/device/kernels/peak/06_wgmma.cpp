#include "device/kernels/peak/peak_registration.hpp"

namespace {
#include "kernels/peak/06_wgmma.cu"
}  // namespace

namespace warpnet::device::peak {
namespace {

const Registration wgmma{Kernel{
    .op = "peak",
    .version = 6,
    .name = "wgmma",
    .precision = "bf16 inputs, fp32 accumulation (wgmma, sm_90a)",
    .shape_text = "block (256) = 2 warpgroups of 64x256 (matmul v16's consumers), grid (blocks): "
                  "one wgmma m64n256k16 per warpgroup and repeat from two 128B-swizzled shared tiles",
    .shape = [](const Sizes& s) { return shape(s, peak_wgmma_tile::THREADS, peak_wgmma_tile::kSharedBytes); },
    .flops = flops,
    .bytes = [](const Sizes& s) { return bytes(s, 2); },
    .min_sm = 90,
    .arch_specific = true,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_peak<__nv_bfloat16>(peak_wgmma, s, l, b);
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::wgmma,
}};

}  // namespace
}  // namespace warpnet::device::peak
