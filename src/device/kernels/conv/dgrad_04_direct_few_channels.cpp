#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace {
#include "kernels/conv/dgrad_04_direct_few_channels.cu"  // includes dgrad_03_autotuned.cu
}  // namespace
#include "device/kernels/conv/dgrad_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_dgrad/04_direct_few_channels";
using conv_dgrad_v04::kDirectTiles;

TunedChoices& tuned() {
  static TunedChoices t;
  return t;
}

// The measured winner for these sizes, or the tuning table's choice.
int choice(const Sizes& s) { return tuned().find(s).value_or(conv_dgrad_v04::table_choice(shape_of(s))); }

// Direct tile i: TH x TW pixels of one image per block.
Launch direct_shape(int i, const Sizes& s) {
  const ConvShape g = shape_of(s);
  const int th = conv_dgrad_v04::kTileRows[i], tw = conv_dgrad_v04::kTileCols[i];
  return Launch{dim3(ceil_div(g.W, tw), ceil_div(g.H, th), g.N), dim3(th * tw), conv_dgrad_v04::shared_bytes(g, th, tw)};
}

Launch launch_shape(int candidate, const Sizes& s) {
  return candidate < kDirectTiles ? direct_shape(candidate, s) : dgrad_tile_shape(candidate - kDirectTiles, s);
}

// Candidate i launched; the caller checks the launch's error.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  if (candidate >= kDirectTiles) return launch_dgrad_tile(kId, candidate - kDirectTiles, s, l, b);
  const ConvShape g = shape_of(s);
  const int th = conv_dgrad_v04::kTileRows[candidate], tw = conv_dgrad_v04::kTileCols[candidate];
  WN_CHECK(conv_dgrad_v04::applies(g, th, tw), kId, ": the direct kernel (", conv_dgrad_v04::candidate_name(candidate),
           ") takes stride 1 and C <= ", conv_dgrad_v04::kMaxChannels,
           " with one channel's window and filters in 48 KiB, got ", describe_sizes(op("conv2d_dgrad"), s));
  conv_dgrad_v04::with_direct(candidate, g, [&]<int CMAX, int TH, int TW>() {
    launch_kernel(conv2d_dgrad_few_channels<CMAX, TH, TW>, l.grid, l.block, l.dynamic_shared, g,
                  conv_dgrad_v04::chunk_channels(g, TH, TW), static_cast<const float*>(b[0]),
                  static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
  });
}

#if defined(__CUDACC__)
// On the current GPU: the direct tiles (where they apply) and dgrad v3's
// tiles timed on `given`, the fastest checked and remembered, so the
// registered conv2d_dgrad/04 launches it from then on for these sizes
// (dgrad_tiles.hpp, conv_tune.hpp).
std::string tune_on_gpu(const Sizes& given) {
  const ConvShape g = shape_of(complete_sizes(op("conv2d_dgrad"), given));
  return tune_dgrad(
      "conv2d_dgrad/04", given, tuned(), conv_dgrad_v04::kCandidates, conv_dgrad_v04::candidate_name,
      [](int i, const Sizes& s, Buffers b) { launch_candidate(i, s, launch_shape(i, s), b); },
      [g](int i) { return conv_dgrad_v04::candidate_applies(i, g); });
}
#endif

const Registration direct_few_channels{Kernel{
    .op = "conv2d_dgrad",
    .version = 4,
    .name = "direct_few_channels",
    .precision = "fp32",
    .shape_text = "at stride 1 and C <= 8: a thread per dx pixel and all its channels, block (256) over 16x16 (or "
                  "8x32) pixels of one image, grid (ceil(W/16), ceil(H/16), N), the dy window and filters of as "
                  "many output channels as 48 KiB of dynamic shared memory holds per chunk; otherwise dgrad v3's "
                  "7 GEMM tiles; the choice measured by Kernel::tune on a GPU, else the 16x16 direct tile where it "
                  "applies and dgrad v3's table elsewhere",
    .shape = [](const Sizes& s) { return launch_shape(choice(s), s); },
    // The forward's FLOPs: the same products, summed the other way.
    .flops = flops,
    // Direct: dy's window read once per block per output channel (the
    // halo rows and columns again for each neighbouring tile), w once per
    // block, dx written once. GEMM tiles: dgrad v3's formula.
    .bytes = [](const Sizes& s) {
      const int i = choice(s);
      if (i >= kDirectTiles) return dgrad_tile_bytes(i - kDirectTiles, s);
      const ConvShape g = shape_of(s);
      const Launch l = direct_shape(i, s);
      const conv_dgrad_v04::Window win =
          conv_dgrad_v04::Window::of(g, conv_dgrad_v04::kTileRows[i], conv_dgrad_v04::kTileCols[i]);
      const double blocks = double(l.grid.x) * l.grid.y * l.grid.z;
      return 4.0 * (blocks * g.K * (double(win.rows) * win.cols + double(g.C) * g.R * g.S) +
                    double(g.N) * g.C * g.H * g.W);
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
