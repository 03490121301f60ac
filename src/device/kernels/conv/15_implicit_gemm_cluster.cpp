#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/15_implicit_gemm_cluster.cu"  // includes conv v14 and v13, matmul's 16 and 13
}  // namespace
#include "device/kernels/matmul/gemm_registration.hpp"      // tensor_map_refusal
#include "device/kernels/matmul/setmaxnreg_registers.hpp"  // require_launch_registers

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_nhwc/15_implicit_gemm_cluster";

void launch_v15(const Sizes& s, const Launch& l, Buffers b) {
  const ConvShape g = shape_of(s);
  const auto* x = static_cast<const __nv_bfloat16*>(b[0]);
  const auto* w = static_cast<const __nv_bfloat16*>(b[1]);
  auto* y = static_cast<__nv_bfloat16*>(b[2]);
  if (!conv_v14::describable(g, x, w)) {
    conv_v13::launch_direct(g, x, w, y);
    check_launch();
    return;
  }
  WN_CHECK(conv_v14::encode_im2col(), kId, ": the driver has no cuTensorMapEncodeIm2col");
  WN_CHECK(wgmma_v13::encode_tiled(), kId, ": the driver has no cuTensorMapEncodeTiled");
  WN_CHECK(l.grid.x % warpnet::kPair == 0, kId, ": a grid of ", l.grid.x, " blocks is not a whole number of clusters of ",
           warpnet::kPair);
  const int blocks = int(l.grid.x), bn = conv_v13::channel_tile(g.K);
  if (bn == 256) gemm::require_launch_registers<conv2d_implicit_gemm_cluster<256>>(kId);  // setmaxnreg's split
  const bool launched = bn == 64    ? conv_v15::launch<64>(blocks, g, x, w, y)
                        : bn == 128 ? conv_v15::launch<128>(blocks, g, x, w, y)
                                    : conv_v15::launch<256>(blocks, g, x, w, y);
  WN_CHECK(launched, kId, ": the driver refused a tensor map at ", describe_sizes(op("conv2d_nhwc"), s),
           gemm::tensor_map_refusal());
  check_launch();
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
    .output_format = &simt::kBfloat16,
}};

}  // namespace
}  // namespace warpnet::device::conv
