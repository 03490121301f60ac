#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/09_warptiling.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

const Registration warptiling{Kernel{
    .op = "matmul",
    .version = 9,
    .name = "warptiling",
    .precision = "fp32",
    .shape_text = "block (256) = 8 warps, grid (ceil(N/128), ceil(M/128)): a 128x128 C tile, warp tiles 64x32 as "
                  "2x2 sub-tiles of 32x16, 4x4 per lane; two cp.async stages of 16-deep k-tiles",
    .shape = [](const Sizes& s) { return Launch{tile_grid(s, 128, 128), dim3(256), 0}; },
    .flops = flops,
    // Each 128x16 tile of A and 16x128 tile of B is read once per block (see tiled_bytes).
    .bytes = [](const Sizes& s) { return tiled_bytes(s, 128, 128); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_gemm(s, l, b, []<bool TA, bool TB>() { return sgemm_warptiling<128, 128, 16, 64, 32, 2, 2, 4, 4, TA, TB>; });
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::gemm
