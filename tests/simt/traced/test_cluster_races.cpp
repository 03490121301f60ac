// The race checker in clusters (src/simt/cluster.hpp): each CTA has its own
// checker, and a peer's multicast bytes land as written before the receiving
// CTA's accesses, so the stage two CTAs share (tests/simt/cluster_kernels.hpp)
// reads clean, neither uninitialized nor racing, while a read of the stage
// before the wait on its barrier is still named. Compiled with warpnet_simt_traced.
#include <doctest/doctest.h>

#include <vector>

#include "kernels/common/all.hpp"
#include "tests/simt/device_buffer.hpp"
#include "tests/simt/tma_helpers.hpp"

namespace {
#include "tests/simt/cluster_kernels.hpp"
}  // namespace

TEST_CASE("traced clusters: a stage filled by a peer's multicast reads clean in both CTAs") {
  DeterministicScope deterministic;
  constexpr int rounds = 3;
  std::vector<uint16_t> t(64 * 8 * rounds);
  for (size_t i = 0; i < t.size(); ++i) t[i] = uint16_t(i);
  DeviceBuffer<uint16_t> d_t(t), out(size_t(2) * rounds * 512);
  CUtensorMap map;
  REQUIRE(encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, d_t.get(), 64, 8 * rounds, 64, 8) == CUDA_SUCCESS);
  const auto run = [&](ClusterMisuse misuse) {
    warpnet::simt::launch_shaped_on(nullptr, multicast_rounds,
                                    warpnet::simt::LaunchShape{dim3(2), dim3(64), 2112, false, dim3(2)}, map, rounds,
                                    out.get(), int(misuse));
  };
  CHECK_NOTHROW(run(kClusterNone));
  const auto got = out.download();
  CHECK(got[(size_t(1) * rounds + 2) * 512] == t[2 * 512]);  // CTA 1's last round, element (0, 0): unswizzled
  // The checker is on in both CTAs: CTA 1 reading before the copy has landed reads bytes nobody wrote.
  CHECK_THROWS_WITH_AS(run(kReadBeforeWait),
                       doctest::Contains("block (1,0,0), thread (0,0,0): reads `dynamic shared memory`"),
                       warpnet::simt::LaunchError);
}
