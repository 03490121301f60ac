#include "device/kernels/peak/peak_registration.hpp"

namespace {
#include "kernels/peak/01_ffma_smem.cu"
}  // namespace

namespace warpnet::device::peak {
namespace {

const Registration ffma_smem{Kernel{
    .op = "peak",
    .version = 1,
    .name = "ffma_smem",
    .precision = "fp32 (CUDA cores: FFMA)",
    .shape_text = "block (256), grid (blocks): an 8x16 thread tile, 2 + 4 float4 shared loads per 128 FFMA per k",
    .shape = [](const Sizes& s) { return shape(s); },
    .flops = flops,
    .bytes = [](const Sizes& s) { return bytes(s, 4); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(peak_ffma_smem, l.grid, l.block, l.dynamic_shared, repeats(s), static_cast<const float*>(b[0]),
                    static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
      check_launch();
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::peak
