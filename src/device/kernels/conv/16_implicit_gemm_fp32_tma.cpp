#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/06_nhwc_vectorized.cu"        // for shapes TMA cannot describe
#include "kernels/conv/16_implicit_gemm_fp32_tma.cu"  // includes conv v14 (v13) and matmul v20 (v16)
}  // namespace
#include "device/kernels/matmul/gemm_registration.hpp"      // tensor_map_refusal
#include "device/kernels/matmul/setmaxnreg_registers.hpp"  // require_launch_registers
#include "device/kernels/tuned_choices.hpp"
#if defined(__CUDACC__)
#include "device/kernels/conv/tile_tune.hpp"
#endif

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_nhwc/16_implicit_gemm_fp32_tma";

// The tune's candidates: 0 is 8 rows a thread (v14's tile heights), 1 is 6.
int rows_of(int candidate) { return candidate == 1 ? conv_v16::kShortRows : conv_v16::kRows; }

// A thread's rows at s, which tile height runs: what the tune measured
// faster on this GPU (tuned(), filled by the tune in the CUDA copy), else
// the rule on this device's SMs (conv_v16::rows_per_thread).
int rows_per_thread(const Sizes& s) {
  if (const auto known = tuned().find(s)) return rows_of(*known);
  return conv_v16::rows_per_thread(shape_of(s), wgmma_v16::sm_count());
}

// The registered launch of the kernel with `rows` a thread.
Launch launch_of(const ConvShape& g, int rows) {
  return Launch{dim3(unsigned(conv_v14::persistent_blocks(conv_v16::tiles_of(g, rows)))), dim3(conv_v16::THREADS),
                conv_v16::shared_bytes(g, rows)};
}

// "96x256, 6x16 a thread": the tile of g at `rows` a thread.
const char* tile_name(const ConvShape& g, int rows) {
  return conv_v16::with_tile(g, rows, []<int BN, int TM>() {
    constexpr const char* names[2][3] = {{"256x64, 8x8 a thread", "128x128, 8x8 a thread", "128x256, 8x16 a thread"},
                                         {"192x64, 6x8 a thread", "96x128, 6x8 a thread", "96x256, 6x16 a thread"}};
    return names[TM == conv_v16::kShortRows][BN == 64 ? 0 : BN == 128 ? 1 : 2];
  });
}

// The kernel with `rows` a thread, `blocks` persistent blocks.
void launch_rows(const Sizes& s, int rows, int blocks, Buffers b) {
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
  const bool launched = conv_v16::with_tile(g, rows, [&]<int BN, int TM>() {
    // 96 or 128 accumulators a thread need setmaxnreg's register split.
    if constexpr (conv_v16::Config<BN, TM>::kReallocate)
      gemm::require_launch_registers<conv2d_implicit_gemm_fp32_tma<BN, TM>>(kId);
    return conv_v16::launch<BN, TM>(blocks, g, x_of(b), w_of(b), y_of(b));
  });
  WN_CHECK(launched, kId, ": the driver refused a tensor map at ", describe_sizes(op("conv2d_nhwc"), s),
           gemm::tensor_map_refusal());
  check_launch();
}

// The registered launch: the tile the tune or the rule picks, as many blocks as the grid has.
void launch_v16(const Sizes& s, const Launch& l, Buffers b) { launch_rows(s, rows_per_thread(s), int(l.grid.x), b); }

#if defined(__CUDACC__)
// Both tile heights timed at s on this GPU (tile_tune.hpp); the faster one runs from then on.
std::string tune_v16(const Sizes& s) {
  static const TileCandidates candidates{
      "conv2d_nhwc/16's tune", [](int i, const Sizes& at) { return tile_name(shape_of(at), rows_of(i)); },
      [](int i, const Sizes& at) { return launch_of(shape_of(at), rows_of(i)); },
      [](int i, const Sizes& at, const Launch& l, Buffers b) { launch_rows(at, rows_of(i), int(l.grid.x), b); }};
  return tune_tiles<float>(candidates, s, tuned());
}
#endif

const Registration implicit_gemm_fp32_tma{Kernel{
    .op = "conv2d_nhwc",
    .version = 16,
    .name = "implicit_gemm_fp32_tma",
    .precision = "fp32 (CUDA cores; TMA: sm_90a)",
    .shape_text = "block (384) = TMA producer warpgroup + 2 consumer warpgroups, persistent grid (min(tiles, SMs)) "
                  "walking tiles of TILE_M consecutive output pixels x BN output channels (v14's 256 x 64, "
                  "128 x 128 or 128 x 256: BN the smallest of 64, 128, 256 that holds K; or 3/4 as tall, "
                  "192 x 64, 96 x 128 or 96 x 256, where a GPU's tune timed them faster; without one, where the "
                  "busiest SM then computes fewer pixel rows); a k-step "
                  "is one TMA im2col copy of x (TILE_M pixels x 32 channels of one filter tap, zeros in the "
                  "padding) and a 3-D box of w, 4-stage mbarrier ring; each consumer thread an 8x8 or 6x8 "
                  "(8x16 or 6x16 at BN = 256, with setmaxnreg 40 producer, 232 consumers) FFMA tile from 16-byte "
                  "loads of the 128B swizzle; when C is not a multiple of 4, the stride is over 8 or a corner or "
                  "tap offset leaves [-128, 127], v06's kernel runs instead",
    // The grid's x is the block count whatever the problem; the launch reads only that.
    .shape = [](const Sizes& s) { return launch_of(shape_of(s), rows_per_thread(s)); },
    .flops = flops,
    // v14's count in fp32: each tile's copies fetched once (x's TILE_M
    // pixels x C·R·S per output-channel tile, w's per pixel tile, channels
    // rounded up to whole 32-channel steps, the last tile's rows past N·P·Q
    // included); y written once.
    .bytes = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      const int tm = rows_per_thread(s), bn = conv_v13::channel_tile(g.K);
      const conv_v14::Tiles tl = conv_v16::tiles_of(g, tm);
      const double taps = double(g.R) * g.S, channels = double(ceil_div(g.C, conv_v16::BK)) * conv_v16::BK;
      return 4.0 * (double(tl.count()) * taps * channels * (conv_v16::tile_height(bn, tm) + bn) + outputs(g));
    },
    .min_sm = 90,
    .arch_specific = true,
    .launch = launch_v16,
    .copy = kThisCopy,
#if defined(__CUDACC__)
    .tune = tune_v16,
#endif
    // The tile that runs, for the record: the tune's or the rule's.
    .candidate = [](const Sizes& s) -> const char* {
      const ConvShape g = shape_of(s);
      if (!conv_v14::describable(g, nullptr, nullptr, sizeof(float)))
        return "v06's kernel (TMA cannot describe x or w)";
      return tile_name(g, rows_per_thread(s));
    },
}};

}  // namespace
}  // namespace warpnet::device::conv
