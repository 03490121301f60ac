// What the persistent wgmma GEMMs in clusters of two (matmul v21 bf16, v22
// fp8) share: two CTAs whose C tiles lie one above the other, each producer
// multicasting half of the common B tile into both, one ring of stages whose
// `empty` barriers count the consumer warps of both CTAs.
//
//   pair_tile(p, rank, ...)       the C tile of CTA `rank` in pair p of the grouped walk
//   pair_rows(M, BM), pair_count  pair rows of a matrix of M rows (tile rows 2p and 2p + 1); pairs of C
//   PairWalk                      this CTA's rank, and the pairs its cluster takes (first, stride, tile)
//   cluster_ring(...)             the ring's barriers, initialized and published with cluster_sync()
//   release_stage_to_both(empty)  a consumer warp hands a stage back to both producers
//   resident_clusters(kernel,...) how many clusters of the kernel the GPU runs at once
//   cluster_blocks(pairs, n)      the persistent grid: whole clusters, at most n of them
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/hopper.hpp"
#include "kernels/common/tile_order.hpp"

namespace warpnet {
inline namespace WARPNET_KERNEL_COPY {

constexpr int kPair = 2;                           // CTAs per cluster, along M
constexpr uint16_t kBothCtas = (1u << kPair) - 1;  // the multicast mask: every CTA of the cluster

struct PairTile {
  int row0, col0;  // C's first row and column of the CTA's tile
};

// Pair p (0 <= p < pairs_m * tiles_n) walked in groups of group_m / 2 pair
// rows (the same group_m tile rows as the single-CTA walk, grouped_tile),
// each column by column; CTA `rank` takes tile row 2 * (pair row) + rank.
__host__ __device__ constexpr PairTile pair_tile(int p, int rank, int pairs_m, int tiles_n, int bm, int bn,
                                                 int group_m) {
  const TileIndex at = grouped_tile(p, pairs_m, tiles_n, group_m / kPair);
  return PairTile{(at.m * kPair + rank) * bm, at.n * bn};
}
__host__ __device__ constexpr int pair_rows(int M, int bm) { return ceil_div(ceil_div(M, bm), kPair); }
__host__ __device__ constexpr int pair_count(int M, int N, int bm, int bn) { return pair_rows(M, bm) * ceil_div(N, bn); }

// How many clusters of kPair CTAs of `kernel` (`threads` each, `shared`
// bytes of dynamic shared memory) the GPU holds at once. A cluster's CTAs
// must share a GPC, so this may be fewer than SMs / kPair; a persistent grid
// of more clusters than fit would run its last ones in a second wave.
// cudaOccupancyMaxActiveClusters on a GPU, asked once for each kernel,
// block, shared size and device (the launches ask at every launch, through
// Kernel::shape, and the query, which places clusters on the GPCs, is not
// one to put between a timed launch and the one before it); `sms` / kPair
// on the emulator (its SMs are its workers, and it runs a cluster on one)
// or when the query fails.
template <class... P>
int resident_clusters(void (*kernel)(P...), unsigned threads, size_t shared, int sms) {
  int clusters = 0;
#if defined(__CUDACC__)
  int device = 0;
  (void)cudaGetDevice(&device);
  static std::mutex mutex;
  static std::map<std::tuple<const void*, unsigned, size_t, int>, int> answered;
  const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), threads, shared, device);
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto known = answered.find(key); known != answered.end()) return known->second;
  // The query counts with the kernel's opted-in limit. A refusal (of the
  // opt-in too) is this query's alone: cleared, so that it is not taken for
  // the next launch's error (the launch opts in again and reports its own),
  // and not remembered.
  bool refused = !opt_in_dynamic_shared(kernel, shared);
  if (!refused) {
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = kPair, attribute.val.clusterDim.y = 1, attribute.val.clusterDim.z = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(kPair), config.blockDim = dim3(threads), config.dynamicSmemBytes = shared;
    config.attrs = &attribute, config.numAttrs = 1;
    refused = cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess;
  }
  if (refused || clusters <= 0) {
    clusters = 0;
    (void)cudaGetLastError();
  } else {
    answered.emplace(key, clusters);
  }
#else
  (void)kernel, (void)threads, (void)shared;
#endif
  return clusters > 0 ? clusters : sms / kPair;
}

// The persistent grid of a pair walk: a cluster per resident cluster, fewer when there are fewer pairs.
inline int cluster_blocks(int pairs, int resident) {
  const int clusters = pairs < resident ? pairs : resident;
  return kPair * (clusters > 0 ? clusters : 1);
}

#if WARPNET_HOPPER_PTX
// The persistent walk of one CTA: its cluster takes pairs first, first +
// stride, ... below `pairs`; both CTAs of a cluster walk the same pairs, so
// their k-steps, and the stages they fill, stay in step.
struct PairWalk {
  unsigned rank;  // %cluster_ctarank
  int rows;       // M: C's rows (a convolution's output pixels)
  int pairs_m, tiles_n, pairs, first, stride;
  int bm, bn, group_m;
  __device__ PairWalk(int M, int N, int bm_, int bn_, int group_m_)
      : rank(warpnet::ptx::cluster_ctarank()),
        rows(M),
        pairs_m(pair_rows(M, bm_)),
        tiles_n(ceil_div(N, bn_)),
        pairs(pairs_m * tiles_n),
        first(int(blockIdx.x) / kPair),
        stride(int(gridDim.x) / kPair),
        bm(bm_),
        bn(bn_),
        group_m(group_m_) {}
  // This CTA's C tile in pair p.
  __device__ PairTile tile(int p) const { return pair_tile(p, int(rank), pairs_m, tiles_n, bm, bn, group_m); }
  // Where the A copies for tile `at` start: at its own rows, or at row 0
  // for the second tile of a last pair that lies wholly past M (an odd
  // number of tile rows). That tile stores nothing, so any rows serve; row
  // 0 keeps its A copies inside the tensor. A box wholly outside would do
  // too: TMA zero-fills it and counts the whole box (v16's A boxes past M
  // and B boxes past N at the test sizes {144, 80, 48}, checked on an H200;
  // and rank 1's half of a B tile is one wherever N - col0 <= 128). The
  // bytes counted are the same.
  __device__ PairTile copied_tile(PairTile at) const { return PairTile{at.row0 < rows ? at.row0 : 0, at.col0}; }
};

struct ClusterRing {
  unsigned char* base;  // stage s at base + s * stage_bytes, 1024-byte aligned (the swizzle's period)
  uint64_t* full;       // per stage: this CTA's producer's arrive.expect_tx, and the bytes of both CTAs' copies
  uint64_t* empty;      // per stage: one arrival from each consumer warp of both CTAs
};

// The ring in dynamic shared memory: `stages` stages from a 1024-byte-aligned
// base, then full[stages] and empty[stages] (the layout of matmul v16's
// ring). Called by every thread; thread 0 initializes, and the cluster meets
// before any CTA's copies or arrivals can reach a peer's barriers.
__device__ __forceinline__ ClusterRing cluster_ring(int stages, uint32_t stage_bytes, uint32_t consumer_warps) {
  using namespace warpnet::ptx;
  unsigned char* raw = dynamic_shared<unsigned char>();
  unsigned char* base = raw + (1024 - shared_address(raw) % 1024) % 1024;
  uint64_t* full = reinterpret_cast<uint64_t*>(base + stages * stage_bytes);
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&full[stages + s], consumer_warps * kPair);
    }
    fence_mbarrier_init();  // visible to the copy engine and the cluster
  }
  cluster_sync();
  return ClusterRing{base, full, full + stages};
}

// A consumer warp is done with a stage: lane r tells CTA r, whose producer
// multicasts into this CTA too. Called by the whole warp right after the
// wgmma.wait_group that retired the stage's wgmmas: .sync.aligned, so every
// lane's are retired when lane r arrives.
__device__ __forceinline__ void release_stage_to_both(uint64_t* empty) {
  const unsigned lane = threadIdx.x % 32;
  if (lane < kPair) warpnet::ptx::mbarrier_arrive_cluster(empty, lane);
}
#endif

}  // namespace WARPNET_KERNEL_COPY
}  // namespace warpnet
