// wgrad v3's GEMM tiles as a registration launches them, for the versions
// that offer them (conv2d_wgrad/03, and 04 and 05 after their own): the
// launch shape of candidate i, its launch with the split sum (shared with
// 04's direct kernel and 05's pipelined tiles) and its global bytes. Included after
// kernels/conv/wgrad_03_autotuned.cu; an anonymous namespace as the other
// registration headers (../copy.hpp).
#pragma once
#include "core/error.hpp"
#include "device/kernels/conv/conv_registration.hpp"

namespace warpnet::device::conv {
namespace {

// A kernel that writes `splits` partial dw's, each (K, C·R·S), summed in a
// fixed order: launch(out) with out = dw itself for one split, else into a
// workspace that sum_splits then adds into dw (same stream: after every
// partial is written). The caller checks the last launch's error.
template <class LaunchPartials>
void launch_split_wgrad(const ConvShape& g, int splits, float* dw, LaunchPartials launch) {
  if (splits == 1) return launch(dw);
  const int elements = g.K * g.crs();
  Workspace part(size_t(splits) * elements * sizeof(float));  // (splits, K, C·R·S)
  launch(part.floats());
  check_launch();
  const warpnet::SumSplitsLaunch sum = warpnet::sum_splits_launch(elements, splits);
  launch_kernel(warpnet::sum_splits<warpnet::kSumThreads>, sum.grid, sum.block, 0, elements, splits,
                static_cast<const float*>(part.floats()), dw);
}

// A GEMM tile T over dW^T (C·R·S, K) — wgrad v3's or v5's, T::kernel(g) —
// BM taps x BN output channels per block, one slice of the pixels per z.
template <class T>
Launch wgrad_gemm_shape(const ConvShape& g, int splits) {
  return Launch{dim3(ceil_div(g.crs(), T::BM), ceil_div(g.K, T::BN), splits), dim3(T::threads), 0};
}

// Tile T launched into dw (buffers {x, dy, dw}) with its pixels split as
// `split` says; the caller checks the launch's error. `id` names the version
// in the error for sizes even the unpacked tap table cannot hold.
template <class T>
void launch_wgrad_gemm(const char* id, const ConvShape& g, const conv_wgrad_v03::Split& split, const Launch& l,
                       Buffers b) {
  require_tap_table(id, conv_taps::wide_table_fits(g), conv_taps::kMostWide);
  const auto* x = static_cast<const float*>(b[0]);
  const auto* dy = static_cast<const float*>(b[1]);
  launch_split_wgrad(g, split.splits, static_cast<float*>(b[2]), [&](float* out) {
    launch_kernel(T::kernel(g), l.grid, l.block, l.dynamic_shared, g, split.slice, x, dy, out);
  });
}

// wgrad v3's candidate i.
inline Launch wgrad_tile_shape(int candidate, const Sizes& s) {
  const ConvShape g = shape_of(s);
  const int splits = conv_wgrad_v03::split_of(candidate, g).splits;
  return conv_wgrad_v03::with_candidate(candidate, [&]<class T>() { return wgrad_gemm_shape<T>(g, splits); });
}
inline void launch_wgrad_tile(const char* id, int candidate, const Sizes& s, const Launch& l, Buffers b) {
  const ConvShape g = shape_of(s);
  conv_wgrad_v03::with_candidate(
      candidate, [&]<class T>() { launch_wgrad_gemm<T>(id, g, conv_wgrad_v03::split_of(candidate, g), l, b); });
}

// The tiled formula at candidate i's tile (rows C·R·S by BM, columns K by BN).
inline double wgrad_tile_bytes(int candidate, const Sizes& s) {
  const int splits = conv_wgrad_v03::split_of(candidate, shape_of(s)).splits;
  return conv_wgrad_v03::with_candidate(candidate,
                                        [&]<class T>() { return wgrad_gemm_tile_bytes(s, T::BM, T::BN, splits); });
}

}  // namespace
}  // namespace warpnet::device::conv
