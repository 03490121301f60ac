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
    .shape_text = "block (128) = 4 warps, grid (ceil(N/32), ceil(M/32)): a 32x32 C tile, one wmma 16x16x16 per warp per k-step",
    .shape = [](const Sizes& s) { return Launch{tile_grid(s, 32, 32), dim3(128), 0}; },
    .flops = flops,
    // Like v3 with 32-wide tiles and 2-byte inputs (see tiled_bytes).
    .bytes = [](const Sizes& s) { return tiled_bytes(s, 32, 32, 2); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_gemm<__nv_bfloat16>(s, l, b, []<bool TA, bool TB>() { return gemm_wmma<__nv_bfloat16, TA, TB>; });
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
}};

}  // namespace
}  // namespace warpnet::device::gemm
