// Thread-block clusters on the emulator (src/simt/cluster.hpp): ranks, a
// stage shared by two CTAs through multicast TMA and remote mbarrier
// arrives, and the errors a GPU would answer with a hang or undefined
// behaviour: a peer that exits under a copy, a cluster_sync() a peer never
// reaches, barriers used before a cluster_sync() published them, and launch
// shapes CUDA refuses.
#include <doctest/doctest.h>

#include <vector>

#include "tests/simt/cluster_kernels.hpp"
#include "tests/simt/device_buffer.hpp"

namespace {

using warpnet::simt::LaunchError;
using warpnet::simt::LaunchShape;

template <class... P, class... A>
void launch_clusters(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, dim3 cluster, A&&... args) {
  warpnet::simt::launch_shaped_on(nullptr, kernel, LaunchShape{grid, block, shared, false, cluster},
                                  std::forward<A>(args)...);
}

__global__ void static_shared_kernel(float* out) {
  __shared__ float s[32];
  s[threadIdx.x] = float(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = s[31 - threadIdx.x];
}

__global__ void syncs_without_clusters() { warpnet::ptx::cluster_sync(); }

constexpr size_t kShared = 1024 + 1024 + 64;

}  // namespace

TEST_CASE("clusters: %cluster_ctarank counts a cluster's CTAs x fastest, from each cluster's first block") {
  const dim3 grid(6, 4), block(32);
  DeviceBuffer<unsigned> out(size_t(3) * 24 * 32);
  for (const dim3 cluster : {dim3(2, 1), dim3(3, 2), dim3(1, 4)}) {
    INFO("cluster (", cluster.x, ",", cluster.y, ")");
    launch_clusters(cluster_ranks, grid, block, 0, cluster, out.get());
    const auto got = out.download();
    for (size_t t = 0; t < 24 * 32; ++t) {
      const unsigned x = got[3 * t], y = got[3 * t + 1];
      CHECK(got[3 * t + 2] == x % cluster.x + cluster.x * (y % cluster.y));
    }
  }
}

TEST_CASE("clusters: one multicast fills a stage in both CTAs, refilled once both have arrived on CTA 0's barrier") {
  // 64 x 32 16-bit elements: 4 rounds of (64 x 8) boxes.
  constexpr int inner = 64, outer = 32, rounds = 4;
  std::vector<uint16_t> t(inner * outer);
  for (size_t i = 0; i < t.size(); ++i) t[i] = uint16_t(7 + 3 * i);
  DeviceBuffer<uint16_t> d_t(t), out(size_t(4) * rounds * 512);  // 4 blocks: 2 clusters of 2 CTAs
  CUtensorMap map;
  REQUIRE(encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, d_t.get(), inner, outer, 64, 8) == CUDA_SUCCESS);
  launch_clusters(multicast_rounds, dim3(4), dim3(64), kShared, dim3(2), map, rounds, out.get(), int(kClusterNone));
  // Every block holds every round's box, as TMA lays it: 128-byte swizzle.
  const auto got = out.download();
  for (int b = 0; b < 4; ++b)
    for (int round = 0; round < rounds; ++round)
      for (int j = 0; j < 8; ++j)
        for (int i = 0; i < 64; ++i) {
          const uint32_t at = (j * 128 + i * 2) ^ ((j % 8) << 4);
          INFO("block ", b, ", round ", round, ", element (", i, ", ", j, ")");
          CHECK(got[(size_t(b) * rounds + round) * 512 + at / 2] == t[(8 * round + j) * inner + i]);
        }
}

TEST_CASE("clusters: a peer's barrier used before cluster_sync(), a copy into an exited peer, a cluster_sync() a peer "
          "skips, are errors that say so") {
  std::vector<uint16_t> t(64 * 32, 1);
  DeviceBuffer<uint16_t> d_t(t), out(size_t(2) * 3 * 512);
  CUtensorMap map;
  REQUIRE(encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, d_t.get(), 64, 32, 64, 8) == CUDA_SUCCESS);
  const auto run = [&](ClusterMisuse misuse) {
    launch_clusters(multicast_rounds, dim3(2), dim3(64), kShared, dim3(2), map, 3, out.get(), int(misuse));
  };
  CHECK_THROWS_WITH_AS(run(kNoPublish),
                       doctest::Contains("CTA 1 initialized its mbarrier at shared address 0xc00 with no cluster_sync() "
                                         "since, so the initialization is not yet visible to other CTAs"),
                       LaunchError);
  CHECK_THROWS_WITH_AS(run(kPeerExitsEarly),
                       doctest::Contains("CTA 1 of the cluster (block (1,0,0)) has exited, and its shared memory with it"),
                       LaunchError);
  CHECK_THROWS_WITH_AS(run(kPeerSkipsSync),
                       doctest::Contains("waits in cluster_sync() ("), LaunchError);
  CHECK_THROWS_WITH_AS(run(kPeerSkipsSync),
                       doctest::Contains("for every thread of its cluster, but thread (0,0,0) of CTA 1 (block (1,0,0)) "
                                         "has exited, and 63 others have not arrived either"),
                       LaunchError);
  CHECK_NOTHROW(run(kClusterNone));
}

TEST_CASE("clusters: launch shapes CUDA refuses, and what the emulator cannot model, are refused by name") {
  DeviceBuffer<unsigned> out(size_t(3) * 16 * 32);
  CHECK_THROWS_WITH_AS(launch_clusters(cluster_ranks, dim3(3, 2), dim3(32), 0, dim3(2, 1), out.get()),
                       doctest::Contains("in clusters of (2,1,1): each grid dimension must be a multiple of the "
                                         "cluster's (cudaErrorInvalidClusterSize)"),
                       LaunchError);
  CHECK_THROWS_WITH_AS(launch_clusters(cluster_ranks, dim3(16), dim3(32), 0, dim3(16), out.get()),
                       doctest::Contains("a cluster has 16 CTAs, the portable limit is 8"), LaunchError);
  DeviceBuffer<float> f(32);
  CHECK_THROWS_WITH_AS(launch_clusters(static_shared_kernel, dim3(2), dim3(32), 0, dim3(2), f.get()),
                       doctest::Contains("declares 128 bytes of static __shared__ memory and is launched in clusters"),
                       LaunchError);
  CHECK_NOTHROW(warpnet::simt::launch(static_shared_kernel, dim3(2), dim3(32), 0, f.get()));
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(syncs_without_clusters, dim3(1), dim3(32), 0),
                       doctest::Contains("cluster_sync() in a launch without clusters"), LaunchError);
}
