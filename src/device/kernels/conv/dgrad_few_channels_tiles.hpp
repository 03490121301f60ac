// dgrad v4's candidates — its direct kernel for few input channels, then
// dgrad v3's GEMM tiles — as a registration launches them, for the versions
// that offer them (conv2d_dgrad/04, and 05 after its pipelined tiles): the
// launch shape of candidate i, its launch, its global bytes. Included after
// kernels/conv/dgrad_04_direct_few_channels.cu; an anonymous namespace as
// the other registration headers (../copy.hpp).
#pragma once
#include "core/error.hpp"
#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/conv/dgrad_tiles.hpp"

namespace warpnet::device::conv {
namespace {

// Direct tile i: TH x TW pixels of one image per block.
inline Launch dgrad_direct_shape(int i, const Sizes& s) {
  const ConvShape g = shape_of(s);
  const int th = conv_dgrad_v04::kTileRows[i], tw = conv_dgrad_v04::kTileCols[i];
  return Launch{dim3(ceil_div(g.W, tw), ceil_div(g.H, th), g.N), dim3(th * tw), conv_dgrad_v04::shared_bytes(g, th, tw)};
}

inline Launch dgrad_v04_shape(int candidate, const Sizes& s) {
  using conv_dgrad_v04::kDirectTiles;
  return candidate < kDirectTiles ? dgrad_direct_shape(candidate, s) : dgrad_tile_shape(candidate - kDirectTiles, s);
}

// dgrad v4's candidate i launched; the caller checks the launch's error.
// `id` names the version in the errors.
inline void launch_dgrad_v04(const char* id, int candidate, const Sizes& s, const Launch& l, Buffers b) {
  using conv_dgrad_v04::kDirectTiles;
  if (candidate >= kDirectTiles) return launch_dgrad_tile(candidate - kDirectTiles, s, l, b);
  const ConvShape g = shape_of(s);
  const int th = conv_dgrad_v04::kTileRows[candidate], tw = conv_dgrad_v04::kTileCols[candidate];
  WN_CHECK(conv_dgrad_v04::applies(g, th, tw), id, ": the direct kernel (", conv_dgrad_v04::candidate_name(candidate),
           ") takes stride 1 and C <= ", conv_dgrad_v04::kMaxChannels,
           " with one channel's window and filters in 48 KiB, got ", describe_sizes(op("conv2d_dgrad"), s));
  conv_dgrad_v04::with_direct(candidate, g, [&]<int CMAX, int TH, int TW>() {
    launch_kernel(conv2d_dgrad_few_channels<CMAX, TH, TW>, l.grid, l.block, l.dynamic_shared, g,
                  conv_dgrad_v04::chunk_channels(g, TH, TW), static_cast<const float*>(b[0]),
                  static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
  });
}

// Direct: dy's window read once per block per output channel (the halo
// rows and columns again for each neighbouring tile), w once per block, dx
// written once. GEMM tiles: dgrad v3's formula.
inline double dgrad_v04_bytes(int candidate, const Sizes& s) {
  using conv_dgrad_v04::kDirectTiles;
  if (candidate >= kDirectTiles) return dgrad_tile_bytes(candidate - kDirectTiles, s);
  const ConvShape g = shape_of(s);
  const Launch l = dgrad_direct_shape(candidate, s);
  const conv_dgrad_v04::Window win =
      conv_dgrad_v04::Window::of(g, conv_dgrad_v04::kTileRows[candidate], conv_dgrad_v04::kTileCols[candidate]);
  const double blocks = double(l.grid.x) * l.grid.y * l.grid.z;
  return 4.0 * (blocks * g.K * (double(win.rows) * win.cols + double(g.C) * g.R * g.S) + double(g.N) * g.C * g.H * g.W);
}

}  // namespace
}  // namespace warpnet::device::conv
