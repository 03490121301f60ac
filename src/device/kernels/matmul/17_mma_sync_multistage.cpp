#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/17_mma_sync_multistage.cu"  // includes 12_mma_sync.cu, whose stage_tile it uses
}  // namespace
#include "device/kernels/matmul/ring_registration.hpp"

namespace warpnet::device::gemm {
namespace {

const Registration mma_sync_multistage{Kernel{
    .op = "matmul",
    .version = 17,
    .name = "mma_sync_multistage",
    // Inputs stored as bf16 (relative error 2^-8 each against fp32); products exact, sums fp32.
    .precision = "bf16 inputs, fp32 accumulation (tensor cores)",
    .shape_text = "block (256) = 8 warps, grid (ceil(M/128) * ceil(N/256)) in groups of 8 tile rows: a 128x256 C "
                  "tile, 64x64 per warp (4x8 mma.sync m16n8k16), 4-stage cp.async ring of 32-wide k-steps in "
                  "100-120 KiB of dynamic shared memory, ldmatrix.x4",
    .shape = ring_shape,
    .flops = flops,
    .bytes = ring_bytes,
    .launch = [](const Sizes& s, const Launch&, Buffers b) {
      launch_ring(s, b, []<bool TA, bool TB>(auto... args) { mma_sync_v17::launch<Registered, TA, TB>(args...); });
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::mma_sync,
}};

}  // namespace
}  // namespace warpnet::device::gemm
