#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/04_1d_blocktiling.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

const Registration blocktiling_1d{Kernel{
    .op = "matmul",
    .version = 4,
    .name = "1d_blocktiling",
    .precision = "fp32",
    .shape_text = "block (512), grid (ceil(N/64), ceil(M/64)): 64x64 C tile per block, BK=8, "
                  "a column of 8 outputs per thread",
    .shape = [](const Sizes& s) { return Launch{tile_grid(s, 64, 64), dim3(64 * 64 / 8), 0}; },
    .flops = flops,
    // A read once per 64-wide column of C tiles, B once per 64-tall row of them.
    .bytes = [](const Sizes& s) { return tiled_bytes(s, 64, 64); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_gemm(s, l, b, []<bool TA, bool TB>() { return sgemm_1d_blocktiling<64, 64, 8, 8, TA, TB>; });
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::gemm
