#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/15_implicit_gemm_cluster.cu"  // includes conv v14 and v13, matmul's 16 and 13
}  // namespace
#include "device/kernels/conv/im2col_registration.hpp"
#include "device/kernels/matmul/setmaxnreg_registers.hpp"  // require_launch_registers
#include "device/kernels/tuned_choices.hpp"
#if defined(__CUDACC__)
#include "device/kernels/conv/tile_tune.hpp"
#endif

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_nhwc/15_implicit_gemm_cluster";

// Two consumer warpgroups or three at s: what the tune measured faster on
// this GPU (tuned(), filled by the tune in the CUDA copy), else the rule
// on this device's SMs (conv_v15::consumers_for).
int consumers_for(const Sizes& s) {
  if (const auto known = tuned().find(s)) return consumers_of(*known);
  return conv_v15::consumers_for(shape_of(s), wgmma_v16::sm_count());
}

// The registered launch of the kernel with `consumers` consumer warpgroups.
Launch launch_of(const ConvShape& g, int consumers) {
  return Launch{dim3(unsigned(conv_v15::persistent_blocks(g, consumers))), dim3(unsigned(consumers + 1) * 128),
                conv_v14::shared_bytes(g, consumers)};
}

// "192x128 pairs, 3 consumer warpgroups": the tile of g with `consumers`.
const char* tile_name(const ConvShape& g, int consumers) {
  return conv_v14::with_tile(g, consumers, []<int BN, int CONSUMERS>() {
    constexpr const char* names[2][3] = {{"pairs of 256x64, 2 consumer warpgroups",
                                          "pairs of 128x128, 2 consumer warpgroups",
                                          "pairs of 128x256, 2 consumer warpgroups"},
                                         {"pairs of 192x64, 3 consumer warpgroups",
                                          "pairs of 192x128, 3 consumer warpgroups", ""}};
    return names[CONSUMERS == 3][BN == 64 ? 0 : BN == 128 ? 1 : 2];
  });
}

// The launch's block says which kernel runs (launch_im2col_version).
void launch_v15(const Sizes& s, const Launch& l, Buffers b) {
  launch_im2col_version(kId, s, l, b, unsigned(warpnet::kPair), [](int blocks, int consumers, const ConvShape& g,
                                                                    auto... buffers) {
    return conv_v14::with_tile(g, consumers, [&]<int BN, int CONSUMERS>() {
      // 128 accumulators a thread (BN = 256) need setmaxnreg's register split.
      if constexpr (conv_v14::Config<BN, CONSUMERS>::kReallocate)
        gemm::require_launch_registers<conv2d_implicit_gemm_cluster<BN, CONSUMERS>>(kId);
      return conv_v15::launch<BN, CONSUMERS>(blocks, g, buffers...);
    });
  });
}

#if defined(__CUDACC__)
// Both tiles timed at s on this GPU (tile_tune.hpp); the faster one runs from then on.
std::string tune_v15(const Sizes& s) {
  static const TileCandidates candidates{
      "conv2d_nhwc/15's tune", [](int i, const Sizes& at) { return tile_name(shape_of(at), consumers_of(i)); },
      [](int i, const Sizes& at) { return launch_of(shape_of(at), consumers_of(i)); },
      [](int, const Sizes& at, const Launch& l, Buffers b) { launch_v15(at, l, b); }};
  return tune_tiles<__nv_bfloat16>(candidates, s, tuned());
}
#endif

const Registration implicit_gemm_cluster{Kernel{
    .op = "conv2d_nhwc",
    .version = 15,
    .name = "implicit_gemm_cluster",
    // Inputs stored as bf16 (relative error 2^-8 each); products exact, sums fp32; y stored as bf16.
    .precision = "bf16 inputs and output, fp32 accumulation (wgmma, sm_90a)",
    .shape_text = "v14's kernel (TILE_M consecutive output pixels x BN output channels, TMA im2col copies of x; "
                  "2 or 3 consumer warpgroups, as v14 takes them) in "
                  "clusters of 2 CTAs along the pixels, persistent over pairs of neighbouring pixel tiles (grid 2 x "
                  "min(pairs, clusters the GPU holds at once)); each CTA multicasts half of the shared w tile into "
                  "both; the 4-stage ring is freed by the consumer warps of both CTAs; when C is not a multiple of "
                  "8, the stride is over 8 or a corner or tap offset leaves [-128, 127], v13's direct kernel runs",
    // The grid's x is the block count whatever the problem, the block's x
    // the kernel (384 or 512 threads); the launch reads only those.
    .shape = [](const Sizes& s) { return launch_of(shape_of(s), consumers_for(s)); },
    .flops = flops,
    // Each tile's x copies once, its w once per pair of tiles (the multicast),
    // in bf16 (the last pair's rows past N·P·Q included); y written once.
    .bytes = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      const int consumers = consumers_for(s), bn = conv_v14::channel_tile(g.K, consumers);
      const int bm = conv_v14::tile_rows(bn, consumers);
      const double taps = double(g.R) * g.S, channels = double(ceil_div(g.C, conv_v13::BK)) * conv_v13::BK;
      const double pairs = conv_v15::pair_count(g, consumers);
      return 2.0 * (pairs * taps * channels * (warpnet::kPair * bm + bn) + outputs(g));
    },
    .min_sm = 90,
    .arch_specific = true,
    .launch = launch_v15,
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::wgmma,
    .output_format = &simt::kBfloat16,
#if defined(__CUDACC__)
    .tune = tune_v15,
#endif
    // The tiles that run, for the record: the tune's or the rule's.
    .candidate = [](const Sizes& s) -> const char* {
      const ConvShape g = shape_of(s);
      if (!conv_v14::describable(g, nullptr, nullptr)) return "v13's direct kernel (TMA cannot describe x or w)";
      return tile_name(g, consumers_for(s));
    },
}};

}  // namespace
}  // namespace warpnet::device::conv
