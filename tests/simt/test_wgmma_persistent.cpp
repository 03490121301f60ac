// matmul/16 (persistent wgmma, 128x256 tiles) where the registry's test sizes
// do not reach: a block that walks several tiles. Its grid is min(tiles,
// SMs), the emulator's SMs are its worker threads, and no registry size has
// more than two 128x256 tiles, so there every block gets one tile. Here the
// launch is given fewer blocks than tiles, through the registration's own
// launch (which takes the block count from the grid), so the mbarrier ring
// and its phases run on from tile to tile and each block's accumulators are
// reused; the result is checked against the op's CPU reference. Also: the
// tile walk visits every tile once, and the registered grid is min(tiles, SMs).
// matmul/18 (v16's pipeline with fp8 e4m3) walks the same tiles and is
// checked the same way.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>
#include <vector>

#include "device/registry.hpp"
#include "device/run.hpp"
#include "kernels/common/all.hpp"  // before the kernel file (see there)
#include "simt/launch.hpp"
#include "tests/simt/device_buffer.hpp"

// The kernel's tile walk (wgmma_v16::tile_at) and tile count, in a named
// namespace: the registration includes the same kernel file (see
// test_wgmma_layout.cpp for why not an anonymous one).
namespace wgmma_persistent_test {
#include "kernels/matmul/16_wgmma_persistent.cu"
}  // namespace wgmma_persistent_test
using namespace wgmma_persistent_test;

using namespace warpnet;

namespace {
constexpr uint64_t kSeed = 16;

// Runs v16 at `sizes` with `blocks` blocks and returns C.
Tensor run_with_blocks(const device::Kernel& kernel, const device::Sizes& sizes, const std::vector<Tensor>& inputs,
                       unsigned blocks) {
  const std::vector<uint8_t> a = device::device_bytes(kernel, inputs[0]), b = device::device_bytes(kernel, inputs[1]);
  DeviceBuffer<uint8_t> a_buffer(a), b_buffer(b);
  // Poisoned, as run_emulated does: an element never written cannot pass.
  DeviceBuffer<float> c_buffer(std::vector<float>(size_t(sizes[0] * sizes[1]), std::nanf("")));
  void* const buffers[3] = {a_buffer.get(), b_buffer.get(), c_buffer.get()};
  device::Launch launch = kernel.shape(sizes);
  launch.grid = dim3(blocks);
  kernel.launch(sizes, launch, device::Buffers(buffers, 3));
  Tensor c = Tensor::empty(Shape{sizes[0], sizes[1]});
  const std::vector<float> values = c_buffer.download();
  std::copy(values.begin(), values.end(), c.data<float>());
  return c;
}

// Checks a persistent version (16, 18) with `blocks` blocks at `sizes` against the op's reference.
void check_with_blocks(const device::Kernel& kernel, const device::Sizes& sizes, unsigned blocks) {
  INFO(device::describe_sizes(device::op("matmul"), sizes), ", ", blocks, " blocks for ",
       wgmma_v16::tile_count(int(sizes[0]), int(sizes[1])), " tiles, seed ", kSeed);
  REQUIRE(int(blocks) < wgmma_v16::tile_count(int(sizes[0]), int(sizes[1])));  // some block takes several
  Rng rng(kSeed);
  const auto inputs = device::make_inputs(kernel, sizes, rng);
  Tensor got;
  REQUIRE_NOTHROW(got = run_with_blocks(kernel, sizes, inputs, blocks));
  const device::Comparison c = device::compare(kernel, sizes, inputs, {got});
  if (c.mismatches) std::printf("%lld of %lld wrong\n%s", (long long)c.mismatches, (long long)c.checked, c.first.c_str());
  CHECK(c.mismatches == 0);
  CHECK(c.checked == int64_t(sizes[0] * sizes[1]));
}

}  // namespace

TEST_CASE("matmul/16: blocks that walk several tiles, the ring running on across them") {
  const device::Kernel& v16 = device::find_kernel("matmul/16");
  // 300 x 520: 3 x 3 tiles of 128x256, partial on both far edges. K = 328:
  // 6 k-steps a tile, not a multiple of the 4 stages, so each tile of a
  // block starts at another stage and parity. One block takes all 9 tiles
  // (54 steps: 13.5 times round the ring); four take 3, 2, 2 and 2.
  for (const int trans_a : {0, 1})
    for (const int trans_b : {0, 1})
      for (const unsigned blocks : {1u, 4u}) check_with_blocks(v16, {300, 520, 328, trans_a, trans_b}, blocks);
  // 1100 x 40: 9 tile rows in one column, more than a group of GROUP_M = 8,
  // so the walk goes on into a second, shorter group.
  check_with_blocks(v16, {1100, 40, 24, 0, 0}, 2);
  // The traced copy, under the checker: every tile's epilogue stores in bounds, no race.
  check_with_blocks(device::find_kernel("matmul/16", device::Copy::traced), {300, 520, 328, 1, 0}, 2);
}

TEST_CASE("matmul/18: fp8 blocks that walk several tiles, the ring running on across them") {
  const device::Kernel& v18 = device::find_kernel("matmul/18");
  // v16's 3 x 3 tiles of 128x256. K = 640: 5 k-steps of 128 a tile, not a
  // multiple of the 4 stages, so each tile of a block starts at another
  // stage and parity; A (M,K) and B (N,K) read in place. Then B row-major
  // (packed K-major first), and both stored the other way with K off 16
  // (both packed, pitch 336).
  for (const unsigned blocks : {1u, 4u}) check_with_blocks(v18, {300, 520, 640, 0, 1}, blocks);
  check_with_blocks(v18, {300, 520, 328, 0, 0}, 4);
  check_with_blocks(v18, {300, 520, 330, 1, 1}, 4);
  // 9 tile rows, more than a group of GROUP_M = 8.
  check_with_blocks(v18, {1100, 40, 48, 0, 1}, 2);
  // The traced copy, under the checker: every tile's epilogue stores in bounds, no race.
  check_with_blocks(device::find_kernel("matmul/18", device::Copy::traced), {300, 520, 640, 0, 1}, 2);
}

TEST_CASE("matmul/16: the persistent walk visits every tile once") {
  for (const auto& [tiles_m, tiles_n] : {std::pair{1, 1}, {3, 3}, {9, 1}, {64, 32}, {17, 5}, {2, 40}}) {
    INFO(tiles_m, " x ", tiles_n, " tiles");
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < tiles_m * tiles_n; ++t) {
      const wgmma_v16::Tile at = wgmma_v16::tile_at(t, tiles_m, tiles_n);
      CHECK(at.row0 % wgmma_v16::BM == 0);
      CHECK(at.col0 % wgmma_v16::BN == 0);
      CHECK(at.row0 / wgmma_v16::BM < tiles_m);
      CHECK(at.col0 / wgmma_v16::BN < tiles_n);
      CHECK(seen.insert({at.row0, at.col0}).second);
    }
    CHECK(int(seen.size()) == tiles_m * tiles_n);
  }
  // The first 132 tiles of 8192^3 (64 x 32 tiles; an H200's 132 SMs run them
  // together) lie in the first 8 tile rows.
  for (int t = 0; t < 132; ++t) CHECK(wgmma_v16::tile_at(t, 64, 32).row0 < 8 * wgmma_v16::BM);
}

TEST_CASE("matmul/16: the registered grid is one block per SM, at most one per tile") {
  const device::Kernel& v16 = device::find_kernel("matmul/16");
  // The emulator reports its worker threads as multiProcessorCount: three here.
  struct ThreeWorkers {
    ThreeWorkers() { simt::set_workers(3); }
    ~ThreeWorkers() { simt::set_workers(0); }
  } three;
  cudaDeviceProp prop{};
  REQUIRE(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
  REQUIRE(prop.multiProcessorCount == 3);
  CHECK(v16.shape({300, 520, 328, 0, 0}).grid.x == 3u);  // 3 x 3 tiles
  CHECK(v16.shape({4096, 4096, 64, 1, 1}).grid.x == 3u);  // 32 x 16
  CHECK(v16.shape({200, 100, 64, 0, 0}).grid.x == 2u);    // 2 x 1
  CHECK(v16.shape({1, 1, 1, 0, 0}).grid.x == 1u);
}
