#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/14_implicit_gemm_im2col.cu"  // includes conv v13, matmul's 16_wgmma_persistent.cu and 13_wgmma_tma.cu
}  // namespace
#include "device/kernels/conv/im2col_registration.hpp"
#include "device/kernels/matmul/setmaxnreg_registers.hpp"  // require_launch_registers

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_nhwc/14_implicit_gemm_im2col";

// The kernel for channel tile BN; 256 needs setmaxnreg's register split.
template <int BN>
bool launch_tile(int blocks, const ConvShape& g, const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y) {
  if constexpr (BN == 256) gemm::require_launch_registers<conv2d_implicit_gemm_im2col<256>>(kId);
  return conv_v14::launch<BN>(blocks, g, x, w, y);
}

void launch_v14(const Sizes& s, const Launch& l, Buffers b) {
  launch_im2col_version(kId, s, l, b, 1, []<int BN>(auto... args) { return launch_tile<BN>(args...); });
}

const Registration implicit_gemm_im2col{Kernel{
    .op = "conv2d_nhwc",
    .version = 14,
    .name = "implicit_gemm_im2col",
    // Inputs stored as bf16 (relative error 2^-8 each); products exact, sums fp32; y stored as bf16.
    .precision = "bf16 inputs and output, fp32 accumulation (wgmma, sm_90a)",
    .shape_text = "v13's kernel (block (384) = TMA producer + 2 consumer warpgroups, persistent grid, 4-stage "
                  "mbarrier ring, wgmma m64nBNk16 with BN 64, 128 or 256) on tiles of TILE_M consecutive output "
                  "pixels of the N·P·Q (256 at BN = 64, else 128), across rows and images: each k-step's A tile is "
                  "one TMA im2col copy of x (TILE_M pixels x 64 channels, walked through the bounding box of the filter windows' starts, read at "
                  "the tap's offsets, zeros in the padding), B a 3-D box of w; when C is not a multiple of 8, the "
                  "stride is over 8 or a corner or tap offset leaves [-128, 127], v13's direct kernel runs instead",
    // The grid's x is the block count whatever the problem; the launch reads only that.
    .shape = [](const Sizes& s) {
      return Launch{dim3(unsigned(conv_v14::persistent_blocks(shape_of(s)))), dim3(conv_v13::THREADS),
                    conv_v14::shared_bytes(shape_of(s))};
    },
    .flops = flops,
    // Each tile's copies are fetched once: x's 128 pixels x C·R·S per
    // output-channel tile, w's per pixel tile, in bf16 (the last tile's rows
    // past N·P·Q included); y written once in bf16.
    .bytes = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      const conv_v14::Tiles tl = conv_v14::tiles_of(g);
      const double taps = double(g.R) * g.S, channels = double(ceil_div(g.C, conv_v13::BK)) * conv_v13::BK;
      const int bn = conv_v13::channel_tile(g.K);
      return 2.0 * (double(tl.count()) * taps * channels * (conv_v14::pixel_tile(bn) + bn) + outputs(g));
    },
    .min_sm = 90,
    .arch_specific = true,
    .launch = launch_v14,
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::wgmma,
    .output_format = &simt::kBfloat16,
}};

}  // namespace
}  // namespace warpnet::device::conv
