// conv v9's candidates — its pipelined tiles, then v8's (the direct kernel
// for few output channels, v7's GEMM tiles) — as a registration launches
// them, for the versions that offer them (conv2d/09, and 10 after its
// Winograd candidates): the launch shape of candidate i, its launch, its
// global bytes. Included after kernels/conv/09_implicit_gemm_pipelined.cu;
// an anonymous namespace as the other registration headers (../copy.hpp).
#pragma once
#include "core/error.hpp"
#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/conv/few_channels_tiles.hpp"

namespace warpnet::device::conv {
namespace {

inline Launch v09_shape(int candidate, const Sizes& s) {
  using conv_v09::kPipelined;
  if (candidate >= kPipelined) return v08_shape(candidate - kPipelined, s);
  return conv_v09::with_pipelined(candidate, [&]<class T>() { return gemm_tiles<T::BM, T::BN>(s, T::threads); });
}

// Candidate i launched; the caller checks the launch's error. `id` names the
// version in the error for sizes the tap table cannot hold.
inline void launch_v09(const char* id, int candidate, const Sizes& s, const Launch& l, Buffers b) {
  using conv_v09::kPipelined;
  if (candidate >= kPipelined) return launch_v08(id, candidate - kPipelined, s, l, b);
  const ConvShape g = shape_of(s);
  require_tap_table(id, conv_taps::table_fits(g));  // the kernel file's preconditions
  conv_v09::with_pipelined(candidate, [&]<class T>() {
    launch_kernel(T::kernel(), l.grid, l.block, l.dynamic_shared, g, x_of(b), w_of(b), y_of(b));
  });
}

// Pipelined: v4's tiled formula at the tile (the virtual A once per column
// of tiles, w once per row of tiles, y once); v8's otherwise.
inline double v09_bytes(int candidate, const Sizes& s) {
  using conv_v09::kPipelined;
  if (candidate >= kPipelined) return v08_bytes(candidate - kPipelined, s);
  return conv_v09::with_pipelined(candidate, [&]<class T>() { return gemm_tile_bytes<T::BM, T::BN>(s, 4.0); });
}

}  // namespace
}  // namespace warpnet::device::conv
