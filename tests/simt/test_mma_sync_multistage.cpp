// matmul/17 (mma.sync, 128x256 tiles, a 4-stage cp.async ring) where the
// registry's test sizes reach little: K long enough that the ring goes round
// several times in every layout (the registry has one such size, NN only),
// more tile rows than one group of the grouped tile order, and the traced
// copy under the checker (races between the refill of a stage and the warps
// still reading it would show there). Also: the tile order visits every tile
// once, and the launch asks for more than the 48 KiB of shared memory a block
// gets without opting in.
#include <doctest/doctest.h>

#include <set>
#include <utility>

#include "device/registry.hpp"
#include "device/run.hpp"
#include "kernels/common/all.hpp"
#include "tests/simt/matches_reference.hpp"

using namespace warpnet;

namespace {
constexpr uint64_t kSeed = 17;

void check_against_reference(const device::Kernel& kernel, const device::Sizes& sizes) {
  test::check_matches_reference(kernel, sizes, kSeed);
}

}  // namespace

TEST_CASE("matmul/17: the 4-stage ring round several times, in every layout") {
  const device::Kernel& v17 = device::find_kernel("matmul/17");
  // 130 x 260: 2 x 2 tiles of 128x256, partial on both far edges. K = 232:
  // 8 k-steps of 32 (the last partial), twice round 4 stages.
  for (const int trans_a : {0, 1})
    for (const int trans_b : {0, 1}) check_against_reference(v17, {130, 260, 232, trans_a, trans_b});
  // Rows not 16-byte aligned (K and M odd): the tiles are copied element by element.
  check_against_reference(v17, {131, 70, 201, 1, 1});
  // 1100 x 40: 9 tile rows in one column, more than one group of 8 rows.
  check_against_reference(v17, {1100, 40, 24, 0, 0});
  // The traced copy, under the checker: no race between a stage's refill and
  // its last readers, no store out of bounds.
  check_against_reference(device::find_kernel("matmul/17", device::Copy::traced), {130, 260, 232, 1, 0});
}

TEST_CASE("grouped_tile visits every tile once, the first ones in a few tile rows") {
  for (const int group : {1, 8})
    for (const auto& [tiles_m, tiles_n] : {std::pair{1, 1}, {9, 1}, {1, 9}, {8, 5}, {17, 3}, {64, 32}}) {
      INFO(tiles_m, " x ", tiles_n, " tiles, groups of ", group);
      std::set<std::pair<int, int>> seen;
      for (int t = 0; t < tiles_m * tiles_n; ++t) {
        const TileIndex at = grouped_tile(t, tiles_m, tiles_n, group);
        CHECK(at.m >= 0);
        CHECK(at.m < tiles_m);
        CHECK(at.n >= 0);
        CHECK(at.n < tiles_n);
        CHECK(seen.insert({at.m, at.n}).second);
      }
      CHECK(int(seen.size()) == tiles_m * tiles_n);
    }
  // Groups of 1 are row-major order.
  CHECK(grouped_tile(5, 3, 4, 1).m == 1);
  CHECK(grouped_tile(5, 3, 4, 1).n == 1);
  // The first 132 tiles of 64 x 32 (what an H200's 132 SMs run at once) lie
  // in 8 tile rows and 17 columns, not in 5 rows of all 32.
  std::set<int> rows, columns;
  for (int t = 0; t < 132; ++t) {
    rows.insert(grouped_tile(t, 64, 32, 8).m);
    columns.insert(grouped_tile(t, 64, 32, 8).n);
  }
  CHECK(rows.size() == 8);
  CHECK(columns.size() == 17);
}

TEST_CASE("matmul/17: the launch opts into more shared memory than a block gets by default") {
  const device::Kernel& v17 = device::find_kernel("matmul/17");
  for (const int trans_a : {0, 1})
    for (const int trans_b : {0, 1}) {
      const device::Launch launch = v17.shape({256, 256, 64, trans_a, trans_b});
      CHECK(launch.dynamic_shared > 48 * 1024);
      CHECK(launch.grid.x == 2u);  // 2 x 1 tiles of 128x256
      CHECK(launch.block.x == 256u);
    }
}
