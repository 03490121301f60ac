#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/08_double_buffered.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

const Registration double_buffered{Kernel{
    .op = "matmul",
    .version = 8,
    .name = "double_buffered",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N/128), ceil(M/128)): a 128x128 C tile, 8x8 per thread; two shared "
                  "stages of 8-deep k-tiles filled by cp.async",
    .shape = [](const Sizes& s) { return Launch{tile_grid(s, 128, 128), dim3(256), 0}; },
    .flops = flops,
    // Each 128x8 tile of A and 8x128 tile of B is read once per block (see tiled_bytes).
    .bytes = [](const Sizes& s) { return tiled_bytes(s, 128, 128); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_gemm(s, l, b, []<bool TA, bool TB>() { return sgemm_double_buffered<128, 128, 8, TA, TB>; });
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::gemm
