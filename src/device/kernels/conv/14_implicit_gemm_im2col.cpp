#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/14_implicit_gemm_im2col.cu"  // includes conv v13, matmul's 16_wgmma_persistent.cu and 13_wgmma_tma.cu
}  // namespace
#include "device/kernels/matmul/gemm_registration.hpp"      // tensor_map_refusal
#include "device/kernels/matmul/setmaxnreg_registers.hpp"  // require_launch_registers

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_nhwc/14_implicit_gemm_im2col";

void launch_v14(const Sizes& s, const Launch& l, Buffers b) {
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
  const int blocks = int(l.grid.x), bn = conv_v13::channel_tile(g.K);
  if (bn == 256) gemm::require_launch_registers<conv2d_implicit_gemm_im2col<256>>(kId);  // setmaxnreg's split
  const bool launched = bn == 64    ? conv_v14::launch<64>(blocks, g, x, w, y)
                        : bn == 128 ? conv_v14::launch<128>(blocks, g, x, w, y)
                                    : conv_v14::launch<256>(blocks, g, x, w, y);
  WN_CHECK(launched, kId, ": the driver refused a tensor map at ", describe_sizes(op("conv2d_nhwc"), s),
           gemm::tensor_map_refusal());
  check_launch();
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
    .output_format = &simt::kBfloat16,
}};

}  // namespace
}  // namespace warpnet::device::conv
