#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/05_2d_blocktiling.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

const Registration blocktiling_2d{Kernel{
    .op = "matmul",
    .version = 5,
    .name = "2d_blocktiling",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N/128), ceil(M/128)): 128x128 C tile per block, BK=8, "
                  "an 8x8 register tile per thread",
    .shape = [](const Sizes& s) { return Launch{tile_grid(s, 128, 128), dim3((128 / 8) * (128 / 8)), 0}; },
    .flops = flops,
    // A read once per 128-wide column of C tiles, B once per 128-tall row of them.
    .bytes = [](const Sizes& s) { return tiled_bytes(s, 128, 128); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_gemm(s, l, b, []<bool TA, bool TB>() { return sgemm_2d_blocktiling<128, 128, 8, 8, 8, TA, TB>; });
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::gemm
