// conv v8's candidates — its direct kernel for few output channels, then
// v7's GEMM tiles — as a registration launches them, for the versions that
// offer them (conv2d/08, and 09 and 10 after their own kernels): the launch
// shape of candidate i, its launch, its global bytes. Included after
// kernels/conv/08_direct_few_channels.cu; an anonymous namespace as the
// other registration headers (../copy.hpp).
#pragma once
#include "core/error.hpp"
#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/conv/conv_tiles.hpp"

namespace warpnet::device::conv {
namespace {

inline Launch v08_shape(int candidate, const Sizes& s) {
  if (candidate >= conv_v08::kDirectBlocks) return conv_tile_shape(candidate - conv_v08::kDirectBlocks, s);
  const ConvShape g = shape_of(s);
  const int threads = conv_v08::kThreads[candidate];
  return Launch{conv_v08::grid(g, threads), dim3(threads), conv_v08::shared_bytes(g, threads)};
}

// v8's candidate i launched; the caller checks the launch's error. `id`
// names the version in the errors.
inline void launch_v08(const char* id, int candidate, const Sizes& s, const Launch& l, Buffers b) {
  if (candidate >= conv_v08::kDirectBlocks) return launch_conv_tile(candidate - conv_v08::kDirectBlocks, s, l, b);
  const ConvShape g = shape_of(s);
  WN_CHECK(conv_v08::applies(g, conv_v08::kThreads[candidate]), id, ": the direct kernel (",
           conv_v08::candidate_name(candidate), ") takes K <= ", conv_v08::kMaxChannels,
           " with one input channel's window and filters in 48 KiB, got ", describe_sizes(op("conv2d"), s));
  conv_v08::with_direct(candidate, g, [&]<int KMAX, int THREADS>() {
    launch_kernel(conv2d_few_channels<KMAX, THREADS>, l.grid, l.block, l.dynamic_shared, g,
                  conv_v08::chunk_channels(g, THREADS), x_of(b), w_of(b), y_of(b));
  });
}

// Direct: x's window read once per block per input channel (the halo
// again for each neighbouring tile), w once per block, y written once.
// GEMM tiles: v7's formula.
inline double v08_bytes(int candidate, const Sizes& s) {
  if (candidate >= conv_v08::kDirectBlocks) return conv_tile_bytes(candidate - conv_v08::kDirectBlocks, s);
  const ConvShape g = shape_of(s);
  const dim3 grid = conv_v08::grid(g, conv_v08::kThreads[candidate]);
  const conv_v08::Tile tile = conv_v08::Tile::of(g, conv_v08::kThreads[candidate]);
  const double blocks = double(grid.x) * grid.y * grid.z;
  return 4.0 * (blocks * g.C * (double(tile.rows) * tile.cols + double(g.K) * g.R * g.S) + outputs(g));
}

}  // namespace
}  // namespace warpnet::device::conv
