#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/15_implicit_gemm_cluster.cu"  // includes conv v14 and v13, matmul's 16 and 13
}  // namespace
#include "device/kernels/conv/im2col_registration.hpp"
#include "device/kernels/matmul/setmaxnreg_registers.hpp"  // require_launch_registers

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_nhwc/15_implicit_gemm_cluster";

// The kernel for channel tile BN; 256 needs setmaxnreg's register split.
template <int BN>
bool launch_tile(int blocks, const ConvShape& g, const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y) {
  if constexpr (BN == 256) gemm::require_launch_registers<conv2d_implicit_gemm_cluster<256>>(kId);
  return conv_v15::launch<BN>(blocks, g, x, w, y);
}

void launch_v15(const Sizes& s, const Launch& l, Buffers b) {
  launch_im2col_version(kId, s, l, b, unsigned(warpnet::kPair), [](int blocks, const ConvShape& g, auto... buffers) {
    return conv_v14::with_tile(g, 2, [&]<int BN, int>() { return launch_tile<BN>(blocks, g, buffers...); });
  });
}

const Registration implicit_gemm_cluster{Kernel{
    .op = "conv2d_nhwc",
    .version = 15,
    .name = "implicit_gemm_cluster",
    // Inputs stored as bf16 (relative error 2^-8 each); products exact, sums fp32; y stored as bf16.
    .precision = "bf16 inputs and output, fp32 accumulation (wgmma, sm_90a)",
    .shape_text = "v14's kernel (TILE_M consecutive output pixels x BN output channels, TMA im2col copies of x) in "
                  "clusters of 2 CTAs along the pixels, persistent over pairs of neighbouring pixel tiles (grid 2 x "
                  "min(pairs, clusters the GPU holds at once)); each CTA multicasts half of the shared w tile into "
                  "both; the 4-stage ring is freed by the consumer warps of both CTAs; when C is not a multiple of "
                  "8, the stride is over 8 or a corner or tap offset leaves [-128, 127], v13's direct kernel runs",
    // The grid's x is the block count whatever the problem; the launch reads only that.
    .shape = [](const Sizes& s) {
      return Launch{dim3(unsigned(conv_v15::persistent_blocks(shape_of(s)))), dim3(conv_v13::THREADS),
                    conv_v14::shared_bytes(shape_of(s))};
    },
    .flops = flops,
    // Each tile's x copies once, its w once per pair of tiles (the multicast),
    // in bf16 (the last pair's rows past N·P·Q included); y written once.
    .bytes = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      const int bn = conv_v13::channel_tile(g.K), bm = conv_v14::pixel_tile(bn);
      const double taps = double(g.R) * g.S, channels = double(ceil_div(g.C, conv_v13::BK)) * conv_v13::BK;
      const double pairs = conv_v15::pair_count(g);
      return 2.0 * (pairs * taps * channels * (warpnet::kPair * bm + bn) + outputs(g));
    },
    .min_sm = 90,
    .arch_specific = true,
    .launch = launch_v15,
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::wgmma,
    .output_format = &simt::kBfloat16,
}};

}  // namespace
}  // namespace warpnet::device::conv
