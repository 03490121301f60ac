// The stepping API on the shared-memory tiled SGEMM: one warp, stop by stop,
// with every lane's address checked against what the kernel's indexing says.
// Compiled with warpnet_simt_traced: memory stops come from the access callbacks.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

#include "simt/stepper.hpp"
#include "tests/simt/device_buffer.hpp"

namespace {
#include "kernels/matmul/03_smem_tiled.cu"
}  // namespace

using warpnet::simt::LaneView;
using warpnet::simt::Space;
using warpnet::simt::Stepper;
using warpnet::simt::WarpStop;

namespace {

// 32x32x32: a 2x2 grid of 16x16 blocks, two k-steps.
constexpr int kN = 32;

std::vector<float> iota_matrix(float start) {
  std::vector<float> m(kN * kN);
  std::iota(m.begin(), m.end(), start);
  for (float& x : m) x = float(int(x) % 7) - 3.0f;  // small integers: products are exact
  return m;
}

struct Problem {
  std::vector<float> a = iota_matrix(0), b = iota_matrix(5);
  DeviceBuffer<float> A{a}, B{b}, C{size_t(kN * kN)};
  void launch() const {
    warpnet::simt::launch(sgemm_smem_tiled<16>, dim3(2, 2), dim3(16, 16), 0, kN, kN, kN, A.get(), B.get(), C.get());
  }
  // An op of two launches: a 16x16x16 product on one block, then launch().
  void launch_twice() const {
    warpnet::simt::launch(sgemm_smem_tiled<16>, dim3(1, 1), dim3(16, 16), 0, 16, 16, 16, A.get(), B.get(), C.get());
    launch();
  }
  void check_result() const {
    const auto c = C.download();
    for (int i = 0; i < kN; ++i)
      for (int j = 0; j < kN; ++j) {
        float want = 0;
        for (int k = 0; k < kN; ++k) want += a[i * kN + k] * b[k * kN + j];
        REQUIRE(c[i * kN + j] == want);
      }
  }
};

bool every_lane(const WarpStop& s, auto&& pred) { return std::all_of(s.lanes.begin(), s.lanes.end(), pred); }
std::string file_line(const std::string& where) { return where.substr(0, where.find(' ')); }

}  // namespace

TEST_CASE("stepper: a warp of the tiled SGEMM stops at its loads, its shared stores, then the barrier") {
  Problem p;
  // Block (1,0): columns 16..31, rows 0..15. Warp 1 is threads 32..63:
  // lane l has tx = l % 16, ty = 2 + l / 16, so row = ty and col = 16 + tx.
  Stepper stepper(uint3{1, 0, 0}, 1, [&] { p.launch(); });
  std::vector<WarpStop> before_barrier;
  while (stepper.step() && !stepper.stop().at_barrier) before_barrier.push_back(stepper.stop());
  const WarpStop barrier = stepper.stop();

  // k0 = 0: lane l loads A[row][tx] and B[ty][col], stores As[ty][tx] and Bs[ty][tx].
  const WarpStop *load_a = nullptr, *load_b = nullptr, *store_as = nullptr, *store_bs = nullptr;
  for (const WarpStop& s : before_barrier) {
    CHECK(s.block.x == 1);
    CHECK(s.warp == 1);
    REQUIRE(s.lanes.size() == 32);
    REQUIRE(every_lane(s, [](const LaneView& v) { return v.state == LaneView::State::memory; }));
    const LaneView& l0 = s.lanes[0];
    if (l0.space == Space::global && l0.address == uintptr_t(p.A.get() + 2 * kN)) load_a = &s;
    if (l0.space == Space::global && l0.address == uintptr_t(p.B.get() + 2 * kN + 16)) load_b = &s;
    if (l0.space == Space::shared && l0.variable == "As") store_as = &s;
    if (l0.space == Space::shared && l0.variable == "Bs") store_bs = &s;
  }
  CHECK(before_barrier.size() == 4);
  REQUIRE(load_a);
  REQUIRE(load_b);
  REQUIRE(store_as);
  REQUIRE(store_bs);
  for (unsigned l = 0; l < 32; ++l) {
    CAPTURE(l);
    const unsigned tx = l % 16, ty = 2 + l / 16;
    CHECK(load_a->lanes[l].address == uintptr_t(p.A.get() + ty * kN + tx));
    CHECK(load_b->lanes[l].address == uintptr_t(p.B.get() + ty * kN + 16 + tx));
    CHECK_FALSE(load_a->lanes[l].write);
    // As[ty][tx]: row-major 16 floats per row, so lane l is 4·l bytes past lane 0.
    CHECK(store_as->lanes[l].write);
    CHECK(store_as->lanes[l].bytes == 4);
    CHECK(store_as->lanes[l].address - store_as->lanes[0].address == 4 * l);
    CHECK(store_bs->lanes[l].address - store_bs->lanes[0].address == 4 * l);
    CHECK(store_as->lanes[l].thread.x == tx);
    CHECK(store_as->lanes[l].thread.y == ty);
  }
  // The load of A and the store to As are one source line; each lane names it.
  const std::string as_line = file_line(store_as->lanes[0].where);
  CHECK(as_line.find("kernels/matmul/03_smem_tiled.cu:") == 0);
  CHECK(file_line(load_a->lanes[31].where) == as_line);
  CHECK(file_line(store_bs->lanes[0].where) != as_line);

  REQUIRE(barrier.at_barrier);
  CHECK(every_lane(barrier, [](const LaneView& v) { return v.state == LaneView::State::barrier; }));
  CHECK(file_line(barrier.lanes[0].where).find("03_smem_tiled.cu:") != std::string::npos);
  CHECK(file_line(barrier.lanes[0].where) != as_line);

  // Past the barrier: As[ty][k] is one word for the 16 lanes of a row (a broadcast).
  REQUIRE(stepper.step());
  bool saw_broadcast = false;
  for (int i = 0; i < 4 && !saw_broadcast; ++i, stepper.step()) {
    const WarpStop& s = stepper.stop();
    if (s.at_barrier || s.lanes[0].variable != "As" || s.lanes[0].write) continue;
    saw_broadcast = every_lane(s, [&](const LaneView& v) {
      return v.address == s.lanes[v.lane < 16 ? 0 : 16].address;
    });
  }
  CHECK(saw_broadcast);
  while (stepper.step()) {
  }
  p.check_result();
}

TEST_CASE("stepper: each stop names its launch (kernel, grid, block, which launch) when an op makes several") {
  Problem p;
  // Block (1,0) is in the second launch only: the first has one block.
  Stepper stepper(uint3{1, 0, 0}, 1, [&] { p.launch_twice(); });
  REQUIRE(stepper.step());
  WarpStop s = stepper.stop();
  CHECK(s.launch_index == 1);
  CHECK(s.kernel.find("sgemm_smem_tiled") != std::string::npos);
  CHECK((s.launch.grid.x == 2 && s.launch.grid.y == 2 && s.launch.grid.z == 1));
  CHECK((s.launch.block.x == 16 && s.launch.block.y == 16 && s.launch.block.z == 1));
  const nlohmann::json j = warpnet::simt::to_json(s);
  CHECK(j["launch"] == 1);
  CHECK(j["grid"] == nlohmann::json::array({2, 2, 1}));
  CHECK(j["threads"] == nlohmann::json::array({16, 16, 1}));
  CHECK(j["kernel"] == s.kernel);
  while (stepper.step()) CHECK(stepper.stop().launch_index == 1);
  p.check_result();
}

TEST_CASE("stepper: a block in two launches is watched in each, the stops' launch changing between them") {
  Problem p;
  Stepper stepper(uint3{0, 0, 0}, 0, [&] { p.launch_twice(); });
  std::vector<unsigned> launches, grid_x;
  while (stepper.step()) {
    launches.push_back(stepper.stop().launch_index);
    grid_x.push_back(stepper.stop().launch.grid.x);
  }
  REQUIRE(!launches.empty());
  CHECK(launches.front() == 0);
  CHECK(launches.back() == 1);
  CHECK(std::is_sorted(launches.begin(), launches.end()));
  for (size_t i = 0; i < launches.size(); ++i) CHECK(grid_x[i] == launches[i] + 1);  // grids 1x1, then 2x2
  p.check_result();
}

TEST_CASE("stepper: dropped mid-kernel, the launch still runs to its end") {
  Problem p;
  {
    Stepper stepper(uint3{0, 1, 0}, 7, [&] { p.launch(); });
    REQUIRE(stepper.step());
    CHECK(stepper.stop().warp == 7);
  }
  p.check_result();
}

TEST_CASE("stepper: abandoned mid-kernel, the block in progress ends and no other block runs") {
  Problem p;
  const float sentinel = -1000.0f;  // no product sum of the inputs (integers in -3..3, 32 terms) reaches it
  p.C.upload(std::vector<float>(kN * kN, sentinel));
  {
    Stepper stepper(uint3{0, 0, 0}, 0, [&] { p.launch(); });  // block (0,0) runs first (blocks in order)
    REQUIRE(stepper.step());
    stepper.abandon();
  }
  const auto c = p.C.download();
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kN; ++j) {
      if (i < 16 && j < 16) {  // block (0,0)'s tile: finished, so the right sum
        float want = 0;
        for (int k = 0; k < kN; ++k) want += p.a[i * kN + k] * p.b[k * kN + j];
        REQUIRE(c[i * kN + j] == want);
      } else {  // the three blocks never started
        REQUIRE(c[i * kN + j] == sentinel);
      }
    }
}

TEST_CASE("stepper: the launch's error comes out of step()") {
  Problem p;
  // 33 columns in a 32x32 buffer: the last block column reads past B.
  Stepper stepper(uint3{0, 0, 0}, 0, [&] {
    warpnet::simt::launch(sgemm_smem_tiled<16>, dim3(3, 2), dim3(16, 16), 0, kN, kN + 1, kN, p.A.get(), p.B.get(),
                          p.C.get());
  });
  CHECK_THROWS_WITH_AS(
      [&] {
        while (stepper.step()) {
        }
      }(),
      doctest::Contains("out-of-bounds global-memory"), warpnet::simt::LaunchError);
}
