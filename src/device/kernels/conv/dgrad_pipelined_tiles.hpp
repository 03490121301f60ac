// dgrad v5's candidates — its pipelined tiles at stride 1, then dgrad v4's
// (the direct kernel for few input channels, dgrad v3's GEMM tiles) — as a
// registration launches them, for the versions that offer them
// (conv2d_dgrad/05, and 06 after its Winograd candidates): the launch shape
// of candidate i, its launch, its global bytes. Included after
// kernels/conv/dgrad_05_implicit_gemm_pipelined.cu; an anonymous namespace
// as the other registration headers (../copy.hpp).
#pragma once
#include "core/error.hpp"
#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/conv/dgrad_few_channels_tiles.hpp"

namespace warpnet::device::conv {
namespace {

// A pipelined tile over dX (N·H·W, C).
inline Launch dgrad_v05_shape(int candidate, const Sizes& s) {
  using conv_dgrad_v05::kPipelined;
  if (candidate >= kPipelined) return dgrad_v04_shape(candidate - kPipelined, s);
  const ConvShape g = shape_of(s);
  return conv_dgrad_v05::with_pipelined(candidate, [&]<class T>() {
    return Launch{dim3(ceil_div(g.N * g.H * g.W, T::BM), ceil_div(g.C, T::BN)), dim3(T::threads), 0};
  });
}

// Candidate i launched; the caller checks the launch's error. `id` names
// the version in the errors for sizes the pipelined tiles cannot take.
inline void launch_dgrad_v05(const char* id, int candidate, const Sizes& s, const Launch& l, Buffers b) {
  using conv_dgrad_v05::kPipelined;
  if (candidate >= kPipelined) return launch_dgrad_v04(id, candidate - kPipelined, s, l, b);
  const ConvShape g = shape_of(s);
  // Stride 1, the tap table's 16-bit displacements and its "no tap" mark (the kernel file's preconditions).
  WN_CHECK(g.stride == 1, id, ": the pipelined tiles take stride 1, got ", describe_sizes(op("conv2d_dgrad"), s));
  require_tap_table(id, conv_taps::table_fits(g));
  conv_dgrad_v05::with_pipelined(candidate, [&]<class T>() {
    launch_kernel(T::kernel(), l.grid, l.block, l.dynamic_shared, g, static_cast<const float*>(b[0]),
                  static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
  });
}

// Pipelined: dgrad v3's tiled formula at the tile; dgrad v4's otherwise.
inline double dgrad_v05_bytes(int candidate, const Sizes& s) {
  using conv_dgrad_v05::kPipelined;
  if (candidate >= kPipelined) return dgrad_v04_bytes(candidate - kPipelined, s);
  return conv_dgrad_v05::with_pipelined(candidate,
                                        [&]<class T>() { return dgrad_gemm_tile_bytes(s, T::BM, T::BN); });
}

}  // namespace
}  // namespace warpnet::device::conv
