#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/03_smem_tiled.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

const Registration smem_tiled{Kernel{
    .op = "matmul",
    .version = 3,
    .name = "smem_tiled",
    .precision = "fp32",
    .shape_text = "block (16,16), grid (ceil(N/16), ceil(M/16)): 16x16 tiles of A and B in shared memory",
    .shape = [](const Sizes& s) { return Launch{tile_grid(s, 16, 16), dim3(16, 16), 0}; },
    .flops = flops,
    // 16x fewer reads than v2 (see tiled_bytes).
    .bytes = [](const Sizes& s) { return tiled_bytes(s, 16, 16); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_gemm(s, l, b, []<bool TA, bool TB>() { return sgemm_smem_tiled<16, TA, TB>; });
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::gemm
