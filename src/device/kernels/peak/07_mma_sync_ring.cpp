#include "device/kernels/peak/peak_registration.hpp"

namespace {
#include "kernels/peak/07_mma_sync_ring.cu"
}  // namespace

namespace warpnet::device::peak {
namespace {

const Registration mma_sync_ring{Kernel{
    .op = "peak",
    .version = 7,
    .name = "mma_sync_ring",
    .precision = "bf16 inputs, fp32 accumulation (mma.sync)",
    .shape_text = "block (256) = 8 warps of 64x64 warp tiles, grid (blocks): peak v5's loop over matmul v17's ring of 4 stages of 32 k, "
                  "one __syncthreads a k-step, no copies",
    .shape = [](const Sizes& s) { return shape(s, peak_ring::THREADS, peak_ring::kSharedBytes); },
    .flops = flops,
    .bytes = [](const Sizes& s) { return bytes(s, 2); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_peak<__nv_bfloat16>(peak_mma_sync_ring, s, l, b);
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::mma_sync,
}};

}  // namespace
}  // namespace warpnet::device::peak
