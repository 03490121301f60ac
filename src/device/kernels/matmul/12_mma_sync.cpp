#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/12_mma_sync.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

const Registration mma_sync{Kernel{
    .op = "matmul",
    .version = 12,
    .name = "mma_sync",
    // Inputs stored as bf16 (relative error 2^-8 each against fp32); products exact, sums fp32.
    .precision = "bf16 inputs, fp32 accumulation (tensor cores)",
    .shape_text = "block (256) = 8 warps, grid (ceil(N/128), ceil(M/128)): a 128x128 C tile, 64x32 per warp "
                  "(4x4 mma.sync m16n8k16), k-steps of 32 double-buffered by cp.async, ldmatrix.x4",
    .shape = [](const Sizes& s) { return Launch{tile_grid(s, 128, 128), dim3(256), 0}; },
    .flops = flops,
    // 128x128 tiles of 2-byte inputs (see tiled_bytes).
    .bytes = [](const Sizes& s) { return tiled_bytes(s, 128, 128, 2); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_gemm<__nv_bfloat16>(s, l, b, []<bool TA, bool TB>() { return gemm_mma_sync<128, 128, 32, 64, 32, TA, TB>; });
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::mma_sync,
}};

}  // namespace
}  // namespace warpnet::device::gemm
