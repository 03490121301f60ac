// dgrad v3's GEMM tiles as a registration launches them, for the versions
// that offer them (conv2d_dgrad/03, 04 and 05 after their own kernels): the
// launch shape of candidate i, its launch and its global bytes. Included after
// kernels/conv/dgrad_03_autotuned.cu; an anonymous namespace as the other
// registration headers (../copy.hpp).
#pragma once
#include "core/error.hpp"
#include "device/kernels/conv/conv_registration.hpp"

namespace warpnet::device::conv {
namespace {

// A tile over dX (N·H·W, C): BM input pixels x BN input channels per block.
inline Launch dgrad_tile_shape(int candidate, const Sizes& s) {
  const ConvShape g = shape_of(s);
  return conv_dgrad_v03::with_candidate(candidate, [&]<class T>() {
    return Launch{dim3(ceil_div(g.N * g.H * g.W, T::BM), ceil_div(g.C, T::BN)), dim3(T::threads), 0};
  });
}

// Candidate i's kernel (the tap table's at stride 1 where it fits, dgrad
// v2's otherwise), launched; the caller checks the launch's error.
inline void launch_dgrad_tile(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  const ConvShape g = shape_of(s);
  conv_dgrad_v03::with_candidate(candidate, [&]<class T>() {
    launch_kernel(T::kernel(g), l.grid, l.block, l.dynamic_shared, g, static_cast<const float*>(b[0]),
                  static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
  });
}

// dgrad v2's formula at candidate i's tile (the tables are built from the
// sizes alone: no global reads).
inline double dgrad_tile_bytes(int candidate, const Sizes& s) {
  return conv_dgrad_v03::with_candidate(candidate,
                                        [&]<class T>() { return dgrad_gemm_tile_bytes(s, T::BM, T::BN); });
}

}  // namespace
}  // namespace warpnet::device::conv
