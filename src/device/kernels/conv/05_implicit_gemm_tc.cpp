#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/05_implicit_gemm_tc.cu"
}  // namespace

namespace warpnet::device::conv {
namespace {

// v4's block tile (128 pixels x 64 output channels), 32 taps per step; 8
// warps of 32x32 (2x4 mma.sync m16n8k16 each).
constexpr int BM = 128, BN = 64, BK = 32, WM = 32, WN = 32;

const Registration implicit_gemm_tc{Kernel{
    .op = "conv2d",
    .version = 5,
    .name = "implicit_gemm_tc",
    // Inputs stored as bf16 (relative error 2^-8 each against fp32); products exact, sums fp32.
    .precision = "bf16 inputs, fp32 accumulation (tensor cores)",
    .shape_text = "block (256) = 8 warps, grid (ceil(N*P*Q/128), ceil(K/64)): a 128 (pixels) x 64 (channels) tile "
                  "of the GEMM view, 32 taps per step gathered from x into shared memory, 32x32 per warp "
                  "(2x4 mma.sync m16n8k16, ldmatrix.x4)",
    .shape = [](const Sizes& s) { return gemm_tiles<BM, BN>(s, (BM / WM) * (BN / WN) * 32); },
    .flops = flops,
    // v4's formula with 2-byte inputs.
    .bytes = [](const Sizes& s) { return gemm_tile_bytes<BM, BN>(s, 2.0); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(conv2d_implicit_gemm_tc<BM, BN, BK, WM, WN>, l.grid, l.block, l.dynamic_shared, shape_of(s),
                    static_cast<const __nv_bfloat16*>(b[0]), static_cast<const __nv_bfloat16*>(b[1]), y_of(b));
      check_launch();
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::mma_sync,
}};

}  // namespace
}  // namespace warpnet::device::conv
