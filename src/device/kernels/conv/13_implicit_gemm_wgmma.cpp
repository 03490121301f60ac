#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/13_implicit_gemm_wgmma.cu"  // includes matmul's 16_wgmma_persistent.cu and 13_wgmma_tma.cu
}  // namespace
#include "device/kernels/matmul/gemm_registration.hpp"      // tensor_map_refusal
#include "device/kernels/matmul/setmaxnreg_registers.hpp"  // require_launch_registers

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_nhwc/13_implicit_gemm_wgmma";

void launch_v13(const Sizes& s, const Launch& l, Buffers b) {
  const ConvShape g = shape_of(s);
  const auto* x = static_cast<const __nv_bfloat16*>(b[0]);
  const auto* w = static_cast<const __nv_bfloat16*>(b[1]);
  auto* y = static_cast<__nv_bfloat16*>(b[2]);
  if (!conv_v13::describable(g, x, w)) {
    conv_v13::launch_direct(g, x, w, y);
    check_launch();
    return;
  }
  WN_CHECK(wgmma_v13::encode_tiled(), kId, ": the driver has no cuTensorMapEncodeTiled");
  const int blocks = int(l.grid.x), bn = conv_v13::channel_tile(g.K);
  if (bn == 256) gemm::require_launch_registers<conv2d_implicit_gemm_wgmma<256>>(kId);  // setmaxnreg's split
  const bool launched = bn == 64    ? conv_v13::launch<64>(blocks, g, x, w, y)
                        : bn == 128 ? conv_v13::launch<128>(blocks, g, x, w, y)
                                    : conv_v13::launch<256>(blocks, g, x, w, y);
  WN_CHECK(launched, kId, ": cuTensorMapEncodeTiled refused a map at ", describe_sizes(op("conv2d_nhwc"), s),
           gemm::tensor_map_refusal());
  check_launch();
}

const Registration implicit_gemm_wgmma{Kernel{
    .op = "conv2d_nhwc",
    .version = 13,
    .name = "implicit_gemm_wgmma",
    // Inputs stored as bf16 (relative error 2^-8 each); products exact, sums fp32; y stored as bf16.
    .precision = "bf16 inputs and output, fp32 accumulation (wgmma, sm_90a)",
    .shape_text = "block (384) = TMA producer + 2 consumer warpgroups, persistent grid (min(tiles, SMs)) walking "
                  "tiles of 128 output pixels (a TP x TQ rectangle of one image, TQ the power of two at or above Q) "
                  "x BN output channels (64, 128 or 256: the smallest that holds K, else 256); a k-step is one "
                  "filter tap x 64 input channels: a 4-D TMA box of x (zero-filled padding, element strides for "
                  "stride > 1) and a 3-D box of w, 4-stage mbarrier ring, wgmma m64nBNk16 (at BN = 256 setmaxnreg "
                  "40 producer, 232 consumers), 128B swizzle; y stored as bf16 pairs; when C is not a multiple "
                  "of 8 or the stride is over 8, a direct kernel (a thread per output, 256 a block) runs instead",
    // The grid's x is the block count whatever the problem; the launch reads only that.
    .shape = [](const Sizes& s) {
      return Launch{dim3(unsigned(conv_v13::persistent_blocks(shape_of(s)))), dim3(conv_v13::THREADS),
                    conv_v13::shared_bytes(shape_of(s))};
    },
    .flops = flops,
    // Each tile's boxes are fetched once: x's 128 x C·R·S taps per output-channel
    // tile (the virtual A, read R·S times over through L2), w's per pixel
    // tile, in bf16, rows past P or Q included; y written once in bf16.
    .bytes = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      const conv_v13::PixelTiles pt = conv_v13::pixel_tiles(g);
      const double pixel_tiles = double(g.N) * pt.tiles_p * pt.tiles_q, taps = double(g.R) * g.S;
      const double channels = double(ceil_div(g.C, conv_v13::BK)) * conv_v13::BK;
      const double bn = conv_v13::channel_tile(g.K);
      return 2.0 * (pixel_tiles * pt.tiles_k * taps * channels * (conv_v13::BM + bn) + outputs(g));
    },
    .min_sm = 90,
    .arch_specific = true,
    .launch = launch_v13,
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::wgmma,
    .output_format = &simt::kBfloat16,
}};

}  // namespace
}  // namespace warpnet::device::conv
