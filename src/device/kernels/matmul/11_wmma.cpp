#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/11_wmma.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

// Registered with bf16 inputs, like v12 (and the tensor-core target: cuBLAS
// BF16), so the ladder's 16-bit versions compare with one reference. fp16 and
// bf16 run at the same tensor-core rate; the template takes either.
const Registration wmma_bf16{Kernel{
    .op = "matmul",
    .version = 11,
    .name = "wmma",
    // Inputs stored as bf16 (relative error 2^-8 each against fp32); products exact, sums fp32.
    .precision = "bf16 inputs, fp32 accumulation (tensor cores)",
    .shape_text = "block (256) = 8 warps, grid (ceil(N/128), ceil(M/128)): a 128x128 C tile, 64x32 per warp "
                  "(4x2 wmma 16x16x16 accumulators), k-steps of 32, the next k-tile prefetched into registers",
    .shape = [](const Sizes& s) { return Launch{tile_grid(s, 128, 128), dim3(256), 0}; },
    .flops = flops,
    // 128x128 tiles of 2-byte inputs (see tiled_bytes).
    .bytes = [](const Sizes& s) { return tiled_bytes(s, 128, 128, 2); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_gemm<__nv_bfloat16>(s, l, b, []<bool TA, bool TB>() { return gemm_wmma<__nv_bfloat16, TA, TB>; });
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::wmma,
}};

}  // namespace
}  // namespace warpnet::device::gemm
