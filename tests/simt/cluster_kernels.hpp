// Kernels of the emulator's cluster tests (simt/cluster.hpp), included by the
// plain test and, inside an anonymous namespace, by the traced one.
#pragma once
#include "kernels/common/all.hpp"
#include "tests/simt/tma_helpers.hpp"

// Each thread's blockIdx and %cluster_ctarank, at out[3 * linear thread index ...].
__global__ void cluster_ranks(unsigned* out) {
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned t = block * blockDim.x + threadIdx.x;
  out[3 * t] = blockIdx.x, out[3 * t + 1] = blockIdx.y, out[3 * t + 2] = warpnet::ptx::cluster_ctarank();
}

// Misuses of multicast_rounds.
enum ClusterMisuse {
  kClusterNone,
  kNoPublish,        // the mbarriers' initialization ordered by __syncthreads() only, not cluster_sync()
  kPeerExitsEarly,   // CTA 1 exits after the first round, while CTA 0 still multicasts into it
  kPeerSkipsSync,    // CTA 1 skips the final cluster_sync() that CTA 0 waits in
  kReadBeforeWait,   // CTA 1 reads the stage without waiting on its `full` barrier (the traced test)
};

// A cluster of 2 CTAs shares one stage: per round, CTA 0's thread 0 copies
// the (64 x 8) 16-bit box at (0, 8 * round) into both CTAs with one
// multicast. Each CTA arms its own `full` barrier for the 1024 bytes; once
// its threads have copied the stage out (to out[(blockIdx.x * rounds +
// round) * 512 ...], as it lies in shared memory), its thread 0 arrives on CTA 0's
// `empty` barrier, which CTA 0 waits on before it refills the stage.
__global__ void multicast_rounds(const __grid_constant__ CUtensorMap map, int rounds, uint16_t* out, int misuse) {
  using namespace warpnet::ptx;
  unsigned char* tile = aligned_shared();
  auto* full = reinterpret_cast<uint64_t*>(tile + 1024);
  uint64_t* empty = full + 1;
  const unsigned rank = cluster_ctarank();
  if (threadIdx.x == 0) {
    mbarrier_init(full, 1);
    mbarrier_init(empty, 2);  // one arrival from each CTA
    fence_mbarrier_init();
  }
  if (misuse == kNoPublish) __syncthreads();
  else cluster_sync();  // the peers' barriers are initialized, and visible, before anyone uses them
  for (int i = 0; i < rounds; ++i) {
    if (threadIdx.x == 0) {
      mbarrier_arrive_expect_tx(full, 1024);
      if (rank == 0) {
        if (i > 0) mbarrier_wait(empty, uint32_t(i - 1) & 1);  // both CTAs have copied out the last box
        tma_load_2d_multicast(tile, &map, 0, 8 * i, full, 0b11);
      }
    }
    if (!(misuse == kReadBeforeWait && rank == 1)) mbarrier_wait(full, uint32_t(i) & 1);
    const auto* stage = reinterpret_cast<const uint16_t*>(tile);
    for (int j = threadIdx.x; j < 512; j += blockDim.x) out[(size_t(blockIdx.x) * rounds + i) * 512 + j] = stage[j];
    __syncthreads();
    if (threadIdx.x == 0) mbarrier_arrive_cluster(empty, 0);
    if (misuse == kPeerExitsEarly && rank == 1) return;
  }
  if (!(misuse == kPeerSkipsSync && rank == 1)) cluster_sync();  // no CTA exits while a peer may still reach it
}
