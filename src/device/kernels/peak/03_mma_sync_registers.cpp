#include "device/kernels/peak/peak_registration.hpp"

namespace {
#include "kernels/peak/03_mma_sync_registers.cu"
}  // namespace

namespace warpnet::device::peak {
namespace {

const Registration mma_sync_registers{Kernel{
    .op = "peak",
    .version = 3,
    .name = "mma_sync_registers",
    .precision = "bf16 inputs, fp32 accumulation (mma.sync)",
    .shape_text = "block (256) = 8 warps of 64x64 warp tiles (matmul v17's), grid (blocks): "
                  "32 mma.sync m16n8k16 per warp and repeat on fragments loaded once",
    .shape = [](const Sizes& s) { return shape(s, peak_mma_sync::kThreads<64>); },
    .flops = flops,
    .bytes = [](const Sizes& s) { return bytes(s, 2); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_peak<__nv_bfloat16>(peak_mma_sync_registers<64>, s, l, b);
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::mma_sync,
}};

}  // namespace
}  // namespace warpnet::device::peak
