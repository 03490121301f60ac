#include "device/kernels/peak/peak_registration.hpp"

namespace {
#include "kernels/peak/08_mma_sync_cp_async.cu"
}  // namespace

namespace warpnet::device::peak {
namespace {

const Registration mma_sync_cp_async{Kernel{
    .op = "peak",
    .version = 8,
    .name = "mma_sync_cp_async",
    .precision = "bf16 inputs, fp32 accumulation (mma.sync)",
    .shape_text = "block (256) = 8 warps of 64x64 warp tiles, grid (blocks): peak v7's ring refilled 3 k-steps ahead by "
                  "6 cp.async of 16 bytes a thread, wait_group 2 and one __syncthreads a k-step (matmul v17's main loop)",
    .shape = [](const Sizes& s) { return shape(s, peak_ring::THREADS, peak_ring::kSharedBytes); },
    .flops = flops,
    .bytes = [](const Sizes& s) { return bytes(s, 2); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_peak<__nv_bfloat16>(peak_mma_sync_cp_async, s, l, b);
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::mma_sync,
}};

}  // namespace
}  // namespace warpnet::device::peak
