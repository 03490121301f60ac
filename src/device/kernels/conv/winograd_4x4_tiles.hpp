// conv v12's four F(4x4) Winograd candidates (kernels/conv/winograd_4x4.hpp)
// as a registration launches them, for the versions that offer them
// (conv2d/12 on x; conv2d_dgrad/08 on dy, through dgrad v6's forward view):
// the GEMMs' launch shape, the global bytes (winograd_tiles.hpp's, at 36
// positions and 4x4 tiles), and the launches on a workspace. `view` is the forward convolution
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

// The registry lists the first chunk's GEMM launch, the 36 positions as
// blockIdx.z.
inline Launch winograd_4x4_shape(int candidate, const ConvShape& view) {
  using namespace winograd::f4x4;
  const ConvShape part = images(view, chunk_images(view, chunked(candidate)));
  return winograd_shape(gemm_tile(candidate), view, tiles_of(part), kXi);
}

// winograd_tiles.hpp's count: the filter transform once, the rest per chunk.
inline double winograd_4x4_bytes(int candidate, const ConvShape& view) {
  using namespace winograd::f4x4;
  const int chunk = chunk_images(view, chunked(candidate));
  double bytes = winograd_filter_bytes(view, kXi);
  for (int n0 = 0; n0 < view.N; n0 += chunk) {
    const ConvShape part = images(view, std::min(chunk, view.N - n0));
    bytes += winograd_batch_bytes(gemm_tile(candidate), part, tiles_of(part), kXi);
  }
  return bytes;
}

// Candidate i's launches on a workspace of this registration file's
// (../workspace.hpp) sized for its chunks; TURNED: the filter transform
// reads the filters turned (dgrad v8). The caller has checked that Winograd
// applies and checks the launches' errors; `id` names the version in the
// error for sizes past the kernels' int indexing.
template <bool TURNED>
void launch_winograd_4x4_tile(const char* id, int candidate, const ConvShape& view, const float* x, const float* w,
                              float* y) {
  using namespace winograd::f4x4;
  const int chunk = chunk_images(view, chunked(candidate));
  const winograd::Tiles tiles = tiles_of(images(view, chunk));
  WN_CHECK(double(tiles.pitch) * std::max(view.K, view.C) < 2147483648.0, id, ": ", tiles.count,
           " output tiles of 4x4 times max(channels in, out) = ", std::max(view.K, view.C),
           " passes 2^31 elements per transformed plane; use a smaller batch");
  Workspace workspace(workspace_floats(view, chunk) * sizeof(float));
  launch_winograd<TURNED>(gemm_tile(candidate), chunk, view, x, w, y, workspace.floats());
}

}  // namespace
}  // namespace warpnet::device::conv
