#include "device/kernels/peak/peak_registration.hpp"

namespace {
#include "kernels/peak/09_ffma_8x8_cp_async.cu"
}  // namespace

namespace warpnet::device::peak {
namespace {

const Registration ffma_8x8_cp_async{Kernel{
    .op = "peak",
    .version = 9,
    .name = "ffma_8x8_cp_async",
    .precision = "fp32 (CUDA cores: FFMA)",
    .shape_text = "block (256), grid (2 x blocks): matmul v09's 128x128 blocks, two a tile, with its warps, "
                  "8x8 thread tiles, copies, two stages and one __syncthreads per 16 k",
    .shape = [](const Sizes& s) {
      return Launch{dim3(unsigned(peak_v09_loop::BLOCKS_PER_TILE * blocks(s))), dim3(peak_v09_loop::THREADS), 0};
    },
    .flops = flops,
    .bytes = [](const Sizes& s) { return bytes(s, 4); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_peak<float>(peak_ffma_cp_async, s, l, b);
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::peak
