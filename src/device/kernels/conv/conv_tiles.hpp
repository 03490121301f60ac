// conv v7's GEMM tiles as a registration launches them, for the versions
// that offer them (conv2d/07, 08 and 09 after their own kernels): the launch
// shape of candidate i, its launch and its global bytes. Included after
// kernels/conv/07_autotuned.cu; an anonymous namespace as the other
// registration headers (../copy.hpp).
#pragma once
#include "core/error.hpp"
#include "device/kernels/conv/conv_registration.hpp"

namespace warpnet::device::conv {
namespace {

inline Launch conv_tile_shape(int candidate, const Sizes& s) {
  return conv_v07::with_candidate(candidate, [&]<class T>() { return gemm_tiles<T::BM, T::BN>(s, T::threads); });
}

// Candidate i's kernel, launched; the caller checks the launch's error.
inline void launch_conv_tile(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  const ConvShape g = shape_of(s);
  conv_v07::with_candidate(candidate, [&]<class T>() {
    launch_kernel(T::kernel(g), l.grid, l.block, l.dynamic_shared, g, x_of(b), w_of(b), y_of(b));
  });
}

// The tile's bytes, v4's formula (the table is built from the sizes alone: no global reads).
inline double conv_tile_bytes(int candidate, const Sizes& s) {
  return conv_v07::with_candidate(candidate, [&]<class T>() { return gemm_tile_bytes<T::BM, T::BN>(s, 4.0); });
}

}  // namespace
}  // namespace warpnet::device::conv
