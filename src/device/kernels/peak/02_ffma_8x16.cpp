#include "device/kernels/peak/peak_registration.hpp"

namespace {
#include "kernels/peak/02_ffma_8x16.cu"
}  // namespace

namespace warpnet::device::peak {
namespace {

const Registration ffma_8x16{Kernel{
    .op = "peak",
    .version = 2,
    .name = "ffma_8x16",
    .precision = "fp32 (CUDA cores: FFMA)",
    .shape_text = "block (256), grid (blocks): an 8x16 thread tile, "
                  "2 + 4 float4 shared loads per 128 FFMA per k",
    .shape = [](const Sizes& s) { return shape(s, 256); },
    .flops = flops,
    .bytes = [](const Sizes& s) { return bytes(s, 4); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_peak<float>(peak_ffma_smem<256, 16>, s, l, b);
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::peak
