// What the launches of conv2d_nhwc v14 and v15 share: the bf16 buffers, v13's
// direct kernel for the shapes TMA's im2col mode cannot describe, the
// driver's two encoders, a grid of whole clusters, the consumer warpgroups
// the launch's block asks for, and the errors that name the version.
// Included after the kernel file (conv_v13, conv_v14, wgmma_v13 come from
// it); an anonymous namespace as the other registration headers (../copy.hpp).
#pragma once
#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/matmul/gemm_registration.hpp"  // tensor_map_refusal

namespace warpnet::device::conv {
namespace {

// The candidates of the versions' tunes (tile_tune.hpp): 0 is two consumer
// warpgroups, 1 three.
inline int consumers_of(int candidate) { return candidate == 1 ? 3 : 2; }

// launch_tma(blocks, consumers, g, x, w, y) launches the version's TMA
// kernel for g with `consumers` consumer warpgroups (its tile:
// conv_v14::with_tile) and returns false when the driver refused a tensor
// map. The launch's block says how many: 384 threads are 2, 512 are 3, as
// the registered shape chose, or a test asks. `cluster`: the CTAs a cluster
// holds (1 when the version launches none), which the grid must be a whole
// number of.
template <class LaunchTma>
void launch_im2col_version(const char* id, const Sizes& s, const Launch& l, Buffers b, unsigned cluster,
                           LaunchTma launch_tma) {
  constexpr unsigned kTwo = conv_v14::Config<64, 2>::THREADS, kThree = conv_v14::Config<64, 3>::THREADS;
  WN_CHECK(l.block.x == kTwo || l.block.x == kThree, id, ": a block of ", l.block.x, " threads; the kernels take ",
           kTwo, " (2 consumer warpgroups) or ", kThree, " (3)");
  const ConvShape g = shape_of(s);
  const auto* x = static_cast<const __nv_bfloat16*>(b[0]);
  const auto* w = static_cast<const __nv_bfloat16*>(b[1]);
  auto* y = static_cast<__nv_bfloat16*>(b[2]);
  if (!conv_v14::describable(g, x, w)) {
    conv_v13::launch_direct(g, x, w, y);
    check_launch();
    return;
  }
  WN_CHECK(conv_v14::encode_im2col(), id, ": the driver has no cuTensorMapEncodeIm2col");
  WN_CHECK(wgmma_v13::encode_tiled(), id, ": the driver has no cuTensorMapEncodeTiled");
  WN_CHECK(l.grid.x % cluster == 0, id, ": a grid of ", l.grid.x, " blocks is not a whole number of clusters of ",
           cluster);
  const bool launched = launch_tma(int(l.grid.x), int(l.block.x / 128) - 1, g, x, w, y);
  WN_CHECK(launched, id, ": the driver refused a tensor map at ", describe_sizes(op("conv2d_nhwc"), s),
           gemm::tensor_map_refusal());
  check_launch();
}

}  // namespace
}  // namespace warpnet::device::conv
