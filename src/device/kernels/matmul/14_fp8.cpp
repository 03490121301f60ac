#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/14_fp8.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

const Registration fp8{Kernel{
    .op = "matmul",
    .version = 14,
    .name = "fp8",
    // Inputs stored as fp8 e4m3 (relative error 2^-4 each against fp32); products exact, sums fp32.
    .precision = "fp8 e4m3 inputs, fp32 accumulation (tensor cores, sm_89+)",
    .shape_text = "block (256) = 8 warps, grid (ceil(N/128), ceil(M/128)): a 128x128 C tile, 64x32 per warp "
                  "(4x4 mma.sync m16n8k32 e4m3), k-steps of 64 bytes, k-major shared tiles",
    .shape = [](const Sizes& s) { return Launch{tile_grid(s, 128, 128), dim3(256), 0}; },
    .flops = flops,
    // 128x128 tiles of 1-byte inputs (see tiled_bytes).
    .bytes = [](const Sizes& s) { return tiled_bytes(s, 128, 128, 1); },
    .min_sm = 89,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_gemm<__nv_fp8_e4m3>(s, l, b, []<bool TA, bool TB>() { return gemm_fp8<128, 128, 64, 64, 32, TA, TB>; });
    },
    .copy = kThisCopy,
    .input_format = &simt::kE4M3,
    .tensor_op = Kernel::TensorOp::mma_sync,
}};

}  // namespace
}  // namespace warpnet::device::gemm
