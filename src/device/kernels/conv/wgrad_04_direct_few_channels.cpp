#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace {
#include "kernels/conv/wgrad_04_direct_few_channels.cu"  // includes wgrad_03_autotuned.cu
}  // namespace
#include "device/kernels/conv/wgrad_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_wgrad/04_direct_few_channels";
using conv_wgrad_v04::kDirectTiles;

TunedChoices& tuned() {
  static TunedChoices t;
  return t;
}

// The measured winner for these sizes, or the tuning table's choice.
int choice(const Sizes& s) { return tuned().find(s).value_or(conv_wgrad_v04::table_choice(shape_of(s))); }

// The direct kernel: one block per run of bands.
Launch direct_shape(const Sizes& s) {
  const ConvShape g = shape_of(s);
  return Launch{dim3(conv_wgrad_v04::split_of(g).splits), dim3(conv_wgrad_v04::kThreads),
                conv_wgrad_v04::shared_bytes(g)};
}

Launch launch_shape(int candidate, const Sizes& s) {
  return candidate < kDirectTiles ? direct_shape(s) : wgrad_tile_shape(candidate - kDirectTiles, s);
}

// Candidate i launched, its ordered sum included; the caller checks the launch's error.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  if (candidate >= kDirectTiles) return launch_wgrad_tile(kId, candidate - kDirectTiles, s, l, b);
  const ConvShape g = shape_of(s);
  WN_CHECK(conv_wgrad_v04::applies(g), kId, ": the direct kernel takes K <= ", conv_wgrad_v04::kMaxChannels,
           " and C*R*S <= ", conv_wgrad_v04::kThreads, " with one output row's x window and dy in 48 KiB, got ",
           describe_sizes(op("conv2d_wgrad"), s));
  const conv_wgrad_v04::Split split = conv_wgrad_v04::split_of(g);
  const conv_wgrad_v04::Band band = conv_wgrad_v04::band_of(g);
  launch_split_wgrad(g, split.splits, static_cast<float*>(b[2]), [&](float* out) {
    conv_wgrad_v04::with_direct(g, [&]<int KMAX>() {
      launch_kernel(conv2d_wgrad_few_channels<KMAX>, l.grid, l.block, l.dynamic_shared, g, band, split.run,
                    static_cast<const float*>(b[0]), static_cast<const float*>(b[1]), out);
    });
  });
}

#if defined(__CUDACC__)
// On the current GPU: the direct kernel (where it applies) and wgrad v3's
// tiles timed on `given`, the fastest checked and remembered, so the
// registered conv2d_wgrad/04 launches it from then on for these sizes
// (wgrad_tiles.hpp, conv_tune.hpp).
std::string tune_on_gpu(const Sizes& given) {
  const ConvShape g = shape_of(complete_sizes(op("conv2d_wgrad"), given));
  return tune_wgrad(
      "conv2d_wgrad/04", given, tuned(), conv_wgrad_v04::kCandidates, conv_wgrad_v04::candidate_name,
      [](int i, const Sizes& s, Buffers b) { launch_candidate(i, s, launch_shape(i, s), b); },
      [g](int i) { return conv_wgrad_v04::candidate_applies(i, g); });
}
#endif

const Registration direct_few_channels{Kernel{
    .op = "conv2d_wgrad",
    .version = 4,
    .name = "direct_few_channels",
    .precision = "fp32",
    .shape_text = "at K <= 16 and C*R*S <= 256: a thread per filter tap and all its output channels, block (256), "
                  "grid (splits), each block walking a run of bands (output rows of one image, their x window and "
                  "dy in <= 48 KiB of dynamic shared memory), about 264 blocks, then sum_splits in a fixed order; "
                  "otherwise wgrad v3's 7 GEMM tiles; the choice measured by Kernel::tune on a GPU, else the "
                  "direct kernel where it applies and wgrad v3's table elsewhere",
    .shape = [](const Sizes& s) { return launch_shape(choice(s), s); },
    // The forward's FLOPs: the same products, summed the other way.
    .flops = flops,
    // Direct: x read once per band with its halo rows again, dy once, each
    // block's partial dw written and, with splits > 1, read back and dw
    // written. GEMM tiles: wgrad v3's formula.
    .bytes = [](const Sizes& s) {
      const int i = choice(s);
      if (i >= kDirectTiles) return wgrad_tile_bytes(i - kDirectTiles, s);
      const ConvShape g = shape_of(s);
      const conv_wgrad_v04::Band band = conv_wgrad_v04::band_of(g);
      const int splits = conv_wgrad_v04::split_of(g).splits;
      const double x_rows = double(g.N) * band.bands * double(band.x_pitch) / band.cols;  // rows per full band
      const double dw = double(g.K) * g.crs();
      return 4.0 * (x_rows * g.C * g.W + double(g.N) * g.K * g.P * g.Q + splits * dw +
                    (splits > 1 ? (splits + 1) * dw : 0.0));
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_candidate(choice(s), s, l, b);
      check_launch();
    },
    .copy = kThisCopy,
#if defined(__CUDACC__)
    .tune = tune_on_gpu,
#endif
}};

}  // namespace
}  // namespace warpnet::device::conv
