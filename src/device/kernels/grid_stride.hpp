// The capped grid the grid-stride versions share (elementwise, optimizer
// updates, dropout, the cross-entropy backward, gather, LeNet-5's gradient
// sums): blocks of 256 threads, at most about one wave of resident threads
// on the largest GPU we target (H200: 132 SMs x 2048 threads = 1056 blocks of
// 256), so each thread loops over several items of a large tensor instead of
// the GPU scheduling one short-lived block per 256 items.
// An anonymous namespace although this is a header: it is private to the
// registration files, each compiled as three copies (plain, traced, nvcc;
// see copy.hpp) whose helpers must not be merged by the linker.
#pragma once
#include <algorithm>
#include <cstdint>

#include "device/kernels/copy.hpp"
#include "device/registry.hpp"

namespace warpnet::device {
namespace {

constexpr int kGridStrideBlock = 256;
constexpr int kGridStrideMaxBlocks = 1056;

// Blocks of kGridStrideBlock threads for `items` per-thread items (elements,
// or float4s for a vectorized version), at most kGridStrideMaxBlocks; at
// least one, so 0 items still launch.
inline Launch capped_grid(int64_t items) {
  const int64_t blocks = std::clamp<int64_t>(ceil_div(items, kGridStrideBlock), 1, kGridStrideMaxBlocks);
  return Launch{dim3(unsigned(blocks)), dim3(kGridStrideBlock), 0};
}

}  // namespace
}  // namespace warpnet::device
