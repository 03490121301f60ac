#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/06_nhwc_vectorized.cu"        // for shapes TMA cannot describe
#include "kernels/conv/16_implicit_gemm_fp32_tma.cu"  // includes conv v14 (v13) and matmul v20 (v16)
}  // namespace
#include "device/kernels/matmul/gemm_registration.hpp"      // tensor_map_refusal
#include "device/kernels/matmul/setmaxnreg_registers.hpp"  // require_launch_registers

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_nhwc/16_implicit_gemm_fp32_tma";

// The kernel for channel tile BN; 256 needs setmaxnreg's register split.
template <int BN>
bool launch_tile(int blocks, const ConvShape& g, const float* x, const float* w, float* y) {
  if constexpr (conv_v16::Config<BN>::kReallocate)
    gemm::require_launch_registers<conv2d_implicit_gemm_fp32_tma<BN>>(kId);
  return conv_v16::launch<BN>(blocks, g, x, w, y);
}

void launch_v16(const Sizes& s, const Launch& l, Buffers b) {
  const ConvShape g = shape_of(s);
  if (!conv_v14::describable(g, x_of(b), w_of(b), sizeof(float))) {  // v06's kernel and block tile, as registered there
    constexpr int BM = 128, BN = 64, BK = 8, TM = 8, TN = 4;
    const Launch v06 = gemm_tiles<BM, BN>(s, (BM / TM) * (BN / TN));
    launch_kernel(conv2d_nhwc_vectorized<BM, BN, BK, TM, TN>, v06.grid, v06.block, 0, g, x_of(b), w_of(b), y_of(b));
    check_launch();
    return;
  }
  WN_CHECK(conv_v14::encode_im2col(), kId, ": the driver has no cuTensorMapEncodeIm2col");
  WN_CHECK(wgmma_v13::encode_tiled(), kId, ": the driver has no cuTensorMapEncodeTiled");
  const int blocks = int(l.grid.x), bn = conv_v13::channel_tile(g.K);
  const bool launched = bn == 64    ? launch_tile<64>(blocks, g, x_of(b), w_of(b), y_of(b))
                        : bn == 128 ? launch_tile<128>(blocks, g, x_of(b), w_of(b), y_of(b))
                                    : launch_tile<256>(blocks, g, x_of(b), w_of(b), y_of(b));
  WN_CHECK(launched, kId, ": the driver refused a tensor map at ", describe_sizes(op("conv2d_nhwc"), s),
           gemm::tensor_map_refusal());
  check_launch();
}

const Registration implicit_gemm_fp32_tma{Kernel{
    .op = "conv2d_nhwc",
    .version = 16,
    .name = "implicit_gemm_fp32_tma",
    .precision = "fp32 (CUDA cores; TMA: sm_90a)",
    .shape_text = "block (384) = TMA producer warpgroup + 2 consumer warpgroups, persistent grid (min(tiles, SMs)) "
                  "walking v14's tiles of TILE_M consecutive output pixels x BN output channels (256 x 64, "
                  "128 x 128 or 128 x 256: BN the smallest of 64, 128, 256 that holds K); a k-step is one TMA "
                  "im2col copy of x (TILE_M pixels x 32 channels of one filter tap, zeros in the padding) and a "
                  "3-D box of w, 4-stage mbarrier ring; each consumer thread an 8x8 (8x16 at BN = 256, with "
                  "setmaxnreg 40 producer, 232 consumers) FFMA tile from 16-byte loads of the 128B swizzle; "
                  "when C is not a multiple of 4, the stride is over 8 or a corner or tap offset leaves "
                  "[-128, 127], v06's kernel runs instead",
    // The grid's x is the block count whatever the problem; the launch reads only that.
    .shape = [](const Sizes& s) {
      return Launch{dim3(unsigned(conv_v14::persistent_blocks(shape_of(s)))), dim3(conv_v16::THREADS),
                    conv_v16::shared_bytes(shape_of(s))};
    },
    .flops = flops,
    // v14's count in fp32: each tile's copies fetched once (x's TILE_M
    // pixels x C·R·S per output-channel tile, w's per pixel tile, channels
    // rounded up to whole 32-channel steps, the last tile's rows past N·P·Q
    // included); y written once.
    .bytes = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      const conv_v14::Tiles tl = conv_v14::tiles_of(g);
      const double taps = double(g.R) * g.S, channels = double(ceil_div(g.C, conv_v16::BK)) * conv_v16::BK;
      const int bn = conv_v13::channel_tile(g.K);
      return 4.0 * (double(tl.count()) * taps * channels * (conv_v14::pixel_tile(bn) + bn) + outputs(g));
    },
    .min_sm = 90,
    .arch_specific = true,
    .launch = launch_v16,
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::conv
