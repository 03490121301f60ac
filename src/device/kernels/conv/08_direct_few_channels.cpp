#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace {
#include "kernels/conv/08_direct_few_channels.cu"  // includes 07_autotuned.cu
}  // namespace
#include "device/kernels/conv/conv_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d/08_direct_few_channels";
using conv_v08::kDirectBlocks;

TunedChoices& tuned() {
  static TunedChoices t;
  return t;
}

// The measured winner for these sizes, or the tuning table's choice.
int choice(const Sizes& s) { return tuned().find(s).value_or(conv_v08::table_choice(shape_of(s))); }

Launch launch_shape(int candidate, const Sizes& s) {
  if (candidate >= kDirectBlocks) return conv_tile_shape(candidate - kDirectBlocks, s);
  const ConvShape g = shape_of(s);
  const int threads = conv_v08::kThreads[candidate];
  return Launch{conv_v08::grid(g, threads), dim3(threads), conv_v08::shared_bytes(g, threads)};
}

// Candidate i launched; the caller checks the launch's error.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  if (candidate >= kDirectBlocks) return launch_conv_tile(kId, candidate - kDirectBlocks, s, l, b);
  const ConvShape g = shape_of(s);
  WN_CHECK(conv_v08::applies(g, conv_v08::kThreads[candidate]), kId, ": the direct kernel (",
           conv_v08::candidate_name(candidate), ") takes K <= ", conv_v08::kMaxChannels,
           " with one input channel's window and filters in 48 KiB, got ", describe_sizes(op("conv2d"), s));
  conv_v08::with_direct(candidate, g, [&]<int KMAX, int THREADS>() {
    launch_kernel(conv2d_few_channels<KMAX, THREADS>, l.grid, l.block, l.dynamic_shared, g,
                  conv_v08::chunk_channels(g, THREADS), x_of(b), w_of(b), y_of(b));
  });
}

#if defined(__CUDACC__)
// On the current GPU: the direct kernel (where it applies) and v7's tiles
// timed on `given`, the fastest checked and remembered, so the registered
// conv2d/08 launches it from then on for these sizes (conv_tiles.hpp,
// conv_tune.hpp).
std::string tune_on_gpu(const Sizes& given) {
  const ConvShape g = shape_of(complete_sizes(op("conv2d"), given));
  return tune_conv_forward(
      "conv2d/08", given, tuned(), conv_v08::kCandidates, conv_v08::candidate_name,
      [](int i, const Sizes& s, Buffers b) { launch_candidate(i, s, launch_shape(i, s), b); },
      [g](int i) { return conv_v08::candidate_applies(i, g); });
}
#endif

const Registration direct_few_channels{Kernel{
    .op = "conv2d",
    .version = 8,
    .name = "direct_few_channels",
    .precision = "fp32",
    .shape_text = "at K <= 16: a thread per output pixel and all its channels, block (128 or 256) over whole "
                  "output rows of one image (min(Q, threads) columns), grid (ceil(Q/TW), ceil(P/TH), N), the x "
                  "window and filters of as many input channels as 48 KiB of dynamic shared memory holds per "
                  "chunk; otherwise v7's 7 GEMM tiles; the choice measured by Kernel::tune on a GPU, else the "
                  "128-thread direct kernel where it applies and v7's table elsewhere",
    .shape = [](const Sizes& s) { return launch_shape(choice(s), s); },
    .flops = flops,
    // Direct: x's window read once per block per input channel (the halo
    // again for each neighbouring tile), w once per block, y written once.
    // GEMM tiles: v7's formula.
    .bytes = [](const Sizes& s) {
      const int i = choice(s);
      if (i >= kDirectBlocks) return conv_tile_bytes(i - kDirectBlocks, s);
      const ConvShape g = shape_of(s);
      const dim3 grid = conv_v08::grid(g, conv_v08::kThreads[i]);
      const conv_v08::Tile tile = conv_v08::Tile::of(g, conv_v08::kThreads[i]);
      const double blocks = double(grid.x) * grid.y * grid.z;
      return 4.0 * (blocks * g.C * (double(tile.rows) * tile.cols + double(g.K) * g.R * g.S) + outputs(g));
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
