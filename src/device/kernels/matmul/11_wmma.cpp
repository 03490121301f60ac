#include "device/kernels/matmul/gemm_registration.hpp"
#include "kernels/common/wmma.hpp"

namespace {
#include "kernels/matmul/11_wmma.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

const Registration wmma_fp16{Kernel{
    .op = "matmul",
    .version = 11,
    .name = "wmma",
    // Inputs stored as fp16 (relative error 2^-11 each against fp32); products exact, sums fp32.
    .precision = "fp16 inputs, fp32 accumulation (tensor cores)",
    .shape_text = "block (128) = 4 warps, grid (ceil(N/32), ceil(M/32)): a 32x32 C tile, one wmma 16x16x16 per warp per k-step",
    .shape = [](const Sizes& s) { return Launch{tile_grid(s, 32, 32), dim3(128), 0}; },
    .flops = flops,
    // Like v3 with 32-wide tiles and 2-byte inputs (see tiled_bytes).
    .bytes = [](const Sizes& s) { return tiled_bytes(s, 32, 32, 2); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_gemm<__half>(s, l, b, []<bool TA, bool TB>() { return gemm_wmma<__half, TA, TB>; });
    },
    .copy = kThisCopy,
    .input_format = &simt::kHalf,
}};

}  // namespace
}  // namespace warpnet::device::gemm
