#include "device/kernels/peak/peak_registration.hpp"

namespace {
#include "kernels/peak/01_ffma_8x8.cu"
}  // namespace

namespace warpnet::device::peak {
namespace {

const Registration ffma_8x8{Kernel{
    .op = "peak",
    .version = 1,
    .name = "ffma_8x8",
    .precision = "fp32 (CUDA cores: FFMA)",
    .shape_text = "block (512), grid (blocks): an 8x8 thread tile (matmul v09's), "
                  "2 + 2 float4 shared loads per 64 FFMA per k",
    .shape = [](const Sizes& s) { return shape(s, 512); },
    .flops = flops,
    .bytes = [](const Sizes& s) { return bytes(s, 4); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_peak<float>(peak_ffma_smem<512, 8>, s, l, b);
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::peak
