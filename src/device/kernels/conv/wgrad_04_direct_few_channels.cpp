#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/wgrad_04_direct_few_channels.cu"  // includes wgrad_03_autotuned.cu
}  // namespace
#include "device/kernels/conv/wgrad_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_wgrad/04_direct_few_channels";
using conv_wgrad_v04::kDirectTiles;

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

// Direct: x read once per band with its halo rows again, dy once, each
// block's partial dw written and, with splits > 1, read back and dw written.
// GEMM tiles: wgrad v3's formula.
double bytes_of(int candidate, const Sizes& s) {
  if (candidate >= kDirectTiles) return wgrad_tile_bytes(candidate - kDirectTiles, s);
  const ConvShape g = shape_of(s);
  const conv_wgrad_v04::Band band = conv_wgrad_v04::band_of(g);
  const int splits = conv_wgrad_v04::split_of(g).splits;
  // Rows per full band (none for a band too big to stage, where the direct kernel does not apply).
  const double x_rows = band.cols > 0 ? double(g.N) * band.bands * double(band.x_pitch) / band.cols : 0.0;
  const double dw = double(g.K) * g.crs();
  return 4.0 * (x_rows * g.C * g.W + double(g.N) * g.K * g.P * g.Q + splits * dw +
                (splits > 1 ? (splits + 1) * dw : 0.0));
}

// The direct kernel where it applies, then wgrad v3's 7 GEMM tiles, each
// launch with its ordered sum (wgrad_tiles.hpp).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::wgrad,
    .count = conv_wgrad_v04::kCandidates,
    .name = conv_wgrad_v04::candidate_name,
    .table_choice = conv_wgrad_v04::table_choice,
    .shape = launch_shape,
    .bytes = bytes_of,
    .launch = launch_candidate,
    .applies = conv_wgrad_v04::candidate_applies,
};

const Registration direct_few_channels{autotuned_kernel<kAutotuned>({
    .version = 4,
    .name = "direct_few_channels",
    .shape_text = "at K <= 16 and C*R*S <= 256: a thread per filter tap and all its output channels, block (256), "
                  "grid (splits), each block walking a run of bands (output rows of one image, their x window and "
                  "dy in <= 48 KiB of dynamic shared memory), about 264 blocks, then sum_splits in a fixed order; "
                  "otherwise wgrad v3's 7 GEMM tiles; the choice measured by Kernel::tune on a GPU, else the "
                  "direct kernel where it applies and wgrad v3's table elsewhere",
})};

}  // namespace
}  // namespace warpnet::device::conv
