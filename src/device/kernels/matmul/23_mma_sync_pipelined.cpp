#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/23_mma_sync_pipelined.cu"  // includes 17 and 12, whose pieces it uses
}  // namespace
#include "device/kernels/matmul/ring_registration.hpp"

namespace warpnet::device::gemm {
namespace {

const Registration mma_sync_pipelined{Kernel{
    .op = "matmul",
    .version = 23,
    .name = "mma_sync_pipelined",
    // Inputs stored as bf16 (relative error 2^-8 each against fp32); products exact, sums fp32.
    .precision = "bf16 inputs, fp32 accumulation (tensor cores)",
    .shape_text = "v17's: block (256) = 8 warps, grid (ceil(M/128) * ceil(N/256)) in groups of 8 tile rows, a "
                  "128x256 C tile, 64x64 per warp, 4-stage cp.async ring in 100-120 KiB of dynamic shared "
                  "memory; each warp's ldmatrix one k16 slice ahead of its mma.sync, two fragment sets in registers",
    .shape = ring_shape,
    .flops = flops,
    .bytes = ring_bytes,
    .launch = [](const Sizes& s, const Launch&, Buffers b) {
      launch_ring(s, b, []<bool TA, bool TB>(auto... args) { mma_sync_v23::launch<mma_sync_v23::Registered, TA, TB>(args...); });
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::mma_sync,
}};

}  // namespace
}  // namespace warpnet::device::gemm
