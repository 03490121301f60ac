// conv v12's two F(4x4) Winograd candidates as a registration launches
// them, for the versions that offer them (conv2d/12 on x; conv2d_dgrad/08
// on dy, through dgrad v6's forward view): the GEMMs' launch shape, the
// global bytes (winograd_tiles.hpp's, at 36 positions and 4x4 tiles), and
// the four steps launched on a workspace. `view` is the forward convolution
// computed (ConvShape of x, its filters and y). Included after
// kernels/conv/winograd_4x4.hpp; an anonymous namespace as the other
// registration headers (../copy.hpp).
#pragma once
#include <algorithm>

#include "core/error.hpp"
#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/conv/winograd_tiles.hpp"

namespace warpnet::device::conv {
namespace {

inline Launch winograd_4x4_shape(int candidate, const ConvShape& view) {
  return winograd_shape(candidate, view, winograd::f4x4::tiles_of(view), winograd::f4x4::kXi);
}

inline double winograd_4x4_bytes(int candidate, const ConvShape& view) {
  return winograd_bytes(candidate, view, winograd::f4x4::tiles_of(view), winograd::f4x4::kXi);
}

// Candidate i's four steps on a workspace of this registration file's
// (../workspace.hpp); TURNED: the filter transform reads the filters turned
// (dgrad v8). The caller has checked that Winograd applies and checks the
// launches' errors; `id` names the version in the error for sizes past the
// kernels' int indexing.
template <bool TURNED>
void launch_winograd_4x4_tile(const char* id, int candidate, const ConvShape& view, const float* x, const float* w,
                              float* y) {
  const winograd::Tiles tiles = winograd::f4x4::tiles_of(view);
  WN_CHECK(double(tiles.pitch) * std::max(view.K, view.C) < 2147483648.0, id, ": ", tiles.count,
           " output tiles of 4x4 times max(channels in, out) = ", std::max(view.K, view.C),
           " passes 2^31 elements per transformed plane; use a smaller batch");
  Workspace workspace(winograd::f4x4::workspace_floats(view) * sizeof(float));
  winograd::f4x4::launch_winograd<TURNED>(candidate, view, x, w, y, workspace.floats());
}

}  // namespace
}  // namespace warpnet::device::conv
