// conv v10's Winograd candidates as a registration launches them, for the
// versions that offer them (conv2d/10 on x; conv2d_dgrad/06 on dy, through
// the forward convolution its kernel file derives): the GEMMs' launch shape,
// the global bytes, and the five steps launched on a workspace. `view` is
// the forward convolution computed (ConvShape of x, its filters and y).
// Included after kernels/conv/10_winograd.cu; an anonymous namespace as the
// other registration headers (../copy.hpp).
#pragma once
#include <algorithm>

#include "core/error.hpp"
#include "device/kernels/conv/conv_registration.hpp"

namespace warpnet::device::conv {
namespace {

// The registry lists the GEMMs' launch, the `xis` positions as blockIdx.z
// (the transforms' grids follow from the sizes in launch_winograd_tile):
// v10's 16 on 2x2 tiles by default, v12's 36 on 4x4 ones.
inline Launch winograd_shape(int candidate, const ConvShape& view, const winograd::Tiles& tiles,
                             int xis) {
  return winograd::with_gemm_tile(candidate, [&]<class T>() {
    return Launch{winograd::gemm_grid(candidate, view.K, tiles.pitch, xis), dim3(T::threads), 0};
  });
}
inline Launch winograd_shape(int candidate, const ConvShape& view) {
  return winograd_shape(candidate, view, winograd::tiles_of(view), winograd::kXi);
}

// The filter transform reads the filters and writes U (xis·K·C).
inline double winograd_filter_bytes(const ConvShape& view, int xis) {
  return 4.0 * (double(view.K) * view.C * (9 + xis));
}

// The rest, with T tiles, `xis` positions each, and V, M `pitch` columns
// wide: the input transform reads xis floats of x per tile and channel (an
// upper bound: the neighbours' overlap comes from cache) and writes V
// (xis·C·pitch); each of the xis GEMMs at GEMM tile `tile` reads U[ξ] once
// per column of tiles and V[ξ] once per row of them and writes M[ξ]; the
// output transform reads xis floats of M per tile and channel and writes y.
inline double winograd_batch_bytes(int tile, const ConvShape& view, const winograd::Tiles& tiles, int xis) {
  const double T = tiles.count, pitch = tiles.pitch, K = view.K, C = view.C, xi = xis;
  return winograd::with_gemm_tile(tile, [&]<class Tile>() {
    const double gemms =
        xi * (K * C * ceil_div(tiles.pitch, Tile::BN) + C * pitch * ceil_div(view.K, Tile::BM) + K * pitch);
    const double transforms = xi * C * (T + pitch) + xi * K * T + double(view.N) * K * view.P * view.Q;
    return 4.0 * (transforms + gemms);
  });
}

inline double winograd_bytes(int candidate, const ConvShape& view, const winograd::Tiles& tiles, int xis) {
  return winograd_filter_bytes(view, xis) + winograd_batch_bytes(candidate, view, tiles, xis);
}
inline double winograd_bytes(int candidate, const ConvShape& view) {
  return winograd_bytes(candidate, view, winograd::tiles_of(view), winograd::kXi);
}

// Candidate i's five steps on a workspace of this registration file's
// (../workspace.hpp); TURNED: conv v10's filter transform reads the filters
// turned (dgrad v6). The caller has checked that Winograd applies and checks
// the launches' errors; `id` names the version in the error for sizes past
// the kernels' int indexing.
template <bool TURNED>
void launch_winograd_tile(const char* id, int candidate, const ConvShape& view, const float* x, const float* w,
                          float* y) {
  const winograd::Tiles tiles = winograd::tiles_of(view);
  WN_CHECK(double(tiles.pitch) * std::max(view.K, view.C) < 2147483648.0, id, ": ", tiles.count,
           " output tiles of 2x2 times max(channels in, out) = ", std::max(view.K, view.C),
           " passes 2^31 elements per transformed plane; use a smaller batch");
  Workspace workspace(conv_v10::workspace_floats(view) * sizeof(float));
  conv_v10::launch_winograd<TURNED>(candidate, view, x, w, y, workspace.floats());
}

}  // namespace
}  // namespace warpnet::device::conv
