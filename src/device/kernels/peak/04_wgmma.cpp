#include "device/kernels/peak/peak_registration.hpp"

namespace {
#include "kernels/peak/04_wgmma.cu"
}  // namespace

namespace warpnet::device::peak {
namespace {

const Registration wgmma{Kernel{
    .op = "peak",
    .version = 4,
    .name = "wgmma",
    .precision = "bf16 inputs, fp32 accumulation (wgmma, sm_90a)",
    .shape_text = "block (256) = 2 warpgroups of 64x256 (matmul v16's consumers), grid (blocks): one wgmma "
                  "m64n256k16 per repeat from two 128B-swizzled shared tiles",
    .shape = [](const Sizes& s) { return shape(s, peak_v4::kSharedBytes); },
    .flops = flops,
    .bytes = [](const Sizes& s) { return bytes(s, 2); },
    .min_sm = 90,
    .arch_specific = true,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      warpnet::launch_kernel_opted_in(peak_wgmma, l.grid, l.block, l.dynamic_shared, repeats(s),
                                      static_cast<const __nv_bfloat16*>(b[0]), static_cast<const __nv_bfloat16*>(b[1]),
                                      static_cast<float*>(b[2]));
      check_launch();
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
}};

}  // namespace
}  // namespace warpnet::device::peak
