// conv v11's fused Winograd kernel as a registration launches it, for the
// versions that offer it (conv2d/11 on x; conv2d_dgrad/07 on dy, through
// dgrad v6's forward view): its launch shape, its global bytes, and v10's
// filter transform and the fused kernel launched on a workspace. `view` is
// the forward convolution computed (ConvShape of x, its filters and y).
// Included after kernels/conv/11_winograd_fused.cu; an anonymous namespace
// as the other registration headers (../copy.hpp).
#pragma once
#include "device/kernels/conv/conv_registration.hpp"

namespace warpnet::device::conv {
namespace {

inline Launch fused_shape(const ConvShape& view) {
  return Launch{winograd::fused::grid(view), dim3(winograd::fused::kThreads), 0};
}

// The filter transform reads the filters and writes U (16·K·C); the fused
// kernel reads 16 floats of x per tile and input channel in each of the
// ⌈K/32⌉ blocks over a tile (an upper bound: the windows' overlap comes from
// cache), U in each of the ⌈T/32⌉ blocks over a channel, and writes y.
inline double fused_bytes(const ConvShape& view) {
  const winograd::Tiles tiles = winograd::tiles_of(view);
  const double K = view.K, C = view.C, u = winograd::fused::kXi * K * C;
  return 4.0 * (K * C * 9 + u + winograd::fused::kXi * C * tiles.count * ceil_div(view.K, winograd::fused::BK) +
                u * ceil_div(tiles.count, winograd::fused::BT) + double(view.N) * K * view.P * view.Q);
}

// The two launches on a workspace of this registration file's
// (../workspace.hpp); TURNED: the filter transform reads the filters turned
// (dgrad v7). The caller has checked that Winograd applies and checks the
// launches' errors.
template <bool TURNED>
void launch_fused_tile(const ConvShape& view, const float* x, const float* w, float* y) {
  Workspace workspace(winograd::fused::workspace_floats(view) * sizeof(float));
  winograd::fused::launch<TURNED>(view, x, w, y, workspace.floats());
}

}  // namespace
}  // namespace warpnet::device::conv
