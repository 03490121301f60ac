// wgrad v4's candidates — its direct kernel for few output channels, then
// wgrad v3's GEMM tiles — as a registration launches them, for the versions
// that offer them (conv2d_wgrad/04, and 05 after its pipelined tiles): the
// launch shape of candidate i, its launch with the split sum, its global
// bytes. Included after kernels/conv/wgrad_04_direct_few_channels.cu; an
// anonymous namespace as the other registration headers (../copy.hpp).
#pragma once
#include "core/error.hpp"
#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/conv/wgrad_tiles.hpp"

namespace warpnet::device::conv {
namespace {

// The direct kernel: one block per run of bands.
inline Launch wgrad_direct_shape(const Sizes& s) {
  const ConvShape g = shape_of(s);
  return Launch{dim3(conv_wgrad_v04::split_of(g).splits), dim3(conv_wgrad_v04::kThreads),
                conv_wgrad_v04::shared_bytes(g)};
}

inline Launch wgrad_v04_shape(int candidate, const Sizes& s) {
  using conv_wgrad_v04::kDirectTiles;
  return candidate < kDirectTiles ? wgrad_direct_shape(s) : wgrad_tile_shape(candidate - kDirectTiles, s);
}

// Candidate i launched, its ordered sum included; the caller checks the
// launch's error. `id` names the version in the errors.
inline void launch_wgrad_v04(const char* id, int candidate, const Sizes& s, const Launch& l, Buffers b) {
  using conv_wgrad_v04::kDirectTiles;
  if (candidate >= kDirectTiles) return launch_wgrad_tile(id, candidate - kDirectTiles, s, l, b);
  const ConvShape g = shape_of(s);
  WN_CHECK(conv_wgrad_v04::applies(g), id, ": the direct kernel takes K <= ", conv_wgrad_v04::kMaxChannels,
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
inline double wgrad_v04_bytes(int candidate, const Sizes& s) {
  using conv_wgrad_v04::kDirectTiles;
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

}  // namespace
}  // namespace warpnet::device::conv
