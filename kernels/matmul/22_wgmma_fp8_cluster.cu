// GEMM v22 — Hopper (sm_90a): v18's fp8 e4m3 pipeline in clusters of two CTAs
// that share their B tile through TMA multicast (v21's idea, fp8's format).
//
// Idea: v18 ran level with cuBLASLt's fp8 on the H200 (99.3-100.6% over the
//   2026-12-04 runs), so what is left to win is what v21 goes after in bf16:
//   L2 traffic. An fp8 element is half a bf16 one and the tensor cores take
//   it at twice the rate, so per second a tile's operands draw from L2 what
//   they draw in bf16: at 8192^3 v18 reads 6.4 GB of operand tiles in 0.92
//   ms, 7.0 TB/s (v16: 12.9 GB in 1.45 ms, 8.9 TB/s). Two CTAs with tiles one above the other (tile rows 2p and
//   2p + 1, one tile column) load their common 256 n x 128 k B tile once:
//   each producer copies its 128 rows of it with a multicast TMA into both
//   CTAs. Per k-step a CTA reads 16 KiB of A and 16 of B from L2 where v18
//   reads 16 and 32: a third less.
// The cluster machinery is v21's (kernels/common/cluster_pairs.hpp): the
//   CTAs walk the same tile pairs; each arms its own `full` barrier for the
//   whole 48 KiB stage; a stage is free again once every consumer warp of
//   both CTAs has released it on both CTAs' `empty` barriers (16 arrivals a
//   phase); barriers are published, and the kernel ends, with cluster_sync().
// Layouts, descriptors, precision: v18's. Both operands K-major (8-bit wgmma
//   has no transpose); the registration packs any other operand first, inside
//   the timed region (fp8_operands.hpp). B's map has 128-row boxes, one per
//   CTA, which land at rows 0 and 128 of the stage's B tile: the layout v18's
//   single 256-row box makes. Every wgmma adds into the one accumulator, as
//   in v18 (accumulator_bits = 14 in the registration). No stream-K.
// Changed from v18: clusters of 2 along M; B multicast, half per CTA; empty
//   barriers of 16 warp arrivals from both CTAs; cluster_sync() at start and
//   end; persistent over tile pairs.
// Checked: the registry's test sizes and layouts on the emulator, plain and
//   traced; tests/simt/test_wgmma_persistent.cpp gives it clusters that walk
//   several tile pairs, operands in place and packed.
// Measured: not yet on a GPU (written 2026-12-05; the next lent H200's
//   `gpu-check.sh` times it beside v18 and cuBLASLt's fp8).
// Build: sm_90a only, as v18. Run: build/bin/warpnet trace matmul/22 --size
//   272,280,256,0,1 on the emulator; build/bin/warpnet bench matmul --size
//   8192,8192,8192,0,1 --kernels matmul/18,matmul/22 on an H100/H200.
#include <cstdint>

#include "kernels/common/cluster_pairs.hpp"
#include "kernels/common/hopper.hpp"
#include "kernels/matmul/18_wgmma_fp8_persistent.cu"  // v18's stage; 16's register split; 15's stored, LBO/SBO, make_map

namespace wgmma_fp8_v22 {

using namespace wgmma_fp8_v18;  // BK, BM, BN, STAGES, STAGE, TILE_A, WGMMA_K, THREADS, kSharedBytes, the register split
using warpnet::kPair;
constexpr uint32_t CONSUMER_WARPS = CONSUMERS * 4;
constexpr int B_ROWS = BN / kPair;  // each CTA's share of the B tile: 128 rows n of BK bytes

}  // namespace wgmma_fp8_v22

// map_a: A, (M, pitch) fp8 e4m3 bit patterns (K-major); map_b: B, (N, pitch)
// (K-major, boxes of 128 rows); maps made by wgmma_fp8_v22::launch.
// C: (M,N) row-major fp32. C = A @ B^T.
// Launch: clusters of 2 CTAs along x (launch_kernel_in_clusters); block (384)
// = producer + 2 consumer warpgroups; grid (2 x clusters), any number of
// clusters (persistent_blocks: min(pairs, clusters resident at once));
// dynamic shared kSharedBytes. sm_90a only.
__global__ void __launch_bounds__(wgmma_fp8_v22::THREADS, 1)
    gemm_wgmma_fp8_cluster(int M, int N, int K, const __grid_constant__ CUtensorMap map_a,
                           const __grid_constant__ CUtensorMap map_b, float* __restrict__ C) {
#if WARPNET_HOPPER_PTX
  using namespace wgmma_fp8_v22;
  using namespace warpnet::ptx;
  using wgmma_fp8_v15::stored, wgmma_fp8_v15::LBO, wgmma_fp8_v15::SBO;
  using wgmma_v13::descriptor;
  // Stage s: A tile at base + s*STAGE (TILE_A bytes), B tile right after (CTA r's rows at 128 r).
  const warpnet::ClusterRing ring = warpnet::cluster_ring(STAGES, STAGE, CONSUMER_WARPS);
  const warpnet::PairWalk walk(M, N, BM, BN, wgmma_v16::GROUP_M);
  const unsigned rank = walk.rank;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const int steps = warpnet::ceil_div(K, BK);

  // As v21: both CTAs count the same k-steps across the pairs they walk;
  // step `it` uses stage it % STAGES in round it / STAGES.
  if (wg == 0) {  // producer: one thread keeps the ring full
    setmaxnreg_dec<PRODUCER_REGISTERS>();  // the whole warpgroup, before any thread leaves the branch
    if (t == 0) {
      int it = 0;
      for (int p = walk.first; p < walk.pairs; p += walk.stride) {
        const warpnet::PairTile at = walk.copied_tile(walk.tile(p));
        for (int step = 0; step < steps; ++step, ++it) {
          const int s = it % STAGES, k0 = step * BK;
          if (it >= STAGES) mbarrier_wait(&ring.empty[s], (it / STAGES - 1) & 1);  // both CTAs released round r-1
          unsigned char* a = ring.base + s * STAGE;
          mbarrier_arrive_expect_tx(&ring.full[s], STAGE);  // its A, and both CTAs' halves of B
          tma_load_2d(a, &map_a, k0, at.row0, &ring.full[s]);  // map {K, M}: box 128 k x 128 m
          tma_load_2d_multicast(a + TILE_A + rank * B_ROWS * BK, &map_b, k0, at.col0 + int(rank) * B_ROWS,
                                &ring.full[s], warpnet::kBothCtas);  // map {K, N}: box 128 k x 128 n, into both
        }
      }
    }
  } else {  // consumer wg: rows m0..m0+63 of each tile
    setmaxnreg_inc<CONSUMER_REGISTERS>();
    const int m0 = (wg - 1) * WG_M;
    float acc[ACCUMULATORS];
    int it = 0;
    for (int p = walk.first; p < walk.pairs; p += walk.stride) {
      const warpnet::PairTile at = walk.tile(p);
#pragma unroll
      for (int i = 0; i < ACCUMULATORS; ++i) acc[i] = 0.0f;
      for (int step = 0; step < steps; ++step, ++it) {
        const int s = it % STAGES;
        mbarrier_wait(&ring.full[s], (it / STAGES) & 1);  // this CTA's A and both halves of B have landed
        const uint32_t a = shared_address(ring.base + s * STAGE), b = a + TILE_A;
        wgmma_fence();  // the accumulators' earlier register writes (the zeros too) come first
#pragma unroll
        for (int kk = 0; kk < BK; kk += WGMMA_K)
          wgmma_m64n256k32_e4m3(acc, descriptor(a + stored(m0, kk), LBO, SBO), descriptor(b + stored(0, kk), LBO, SBO));
        wgmma_commit();
        wgmma_wait<1>();  // the previous step's group is done: its stage goes back to both producers
        if (step > 0) warpnet::release_stage_to_both(&ring.empty[(it - 1) % STAGES]);
      }
      wgmma_wait<0>();
      if (steps > 0) warpnet::release_stage_to_both(&ring.empty[(it - 1) % STAGES]);
      wgmma_v13::store_accumulators(acc, C, M, N, at.row0 + m0, at.col0, t);
    }
  }
  cluster_sync();  // the peer may still multicast into this CTA or arrive on its barriers until here
#elif defined(__CUDA_ARCH__)
  __trap();  // compiled for a GPU without wgmma/TMA: never a silent wrong answer
#endif
}

namespace wgmma_fp8_v22 {

// The persistent grid: as many clusters as the GPU holds at once, fewer when
// there are fewer tile pairs.
inline int persistent_blocks(int M, int N) {
  const int resident = warpnet::resident_clusters(gemm_wgmma_fp8_cluster, THREADS, kSharedBytes, wgmma_v16::sm_count());
  return warpnet::cluster_blocks(warpnet::pair_count(M, N, BM, BN), resident);
}

// a: (M, pitch), b: (N, pitch), both K-major. False (nothing launched) when
// the driver refuses a map.
inline bool launch(int blocks, int M, int N, int K, int pitch, const uint8_t* a, const uint8_t* b, float* C) {
  CUtensorMap map_a, map_b;
  if (!wgmma_fp8_v15::make_map(&map_a, a, M, pitch, BM) || !wgmma_fp8_v15::make_map(&map_b, b, N, pitch, B_ROWS))
    return false;
  warpnet::launch_kernel_in_clusters(gemm_wgmma_fp8_cluster, dim3(blocks), dim3(THREADS), kSharedBytes, dim3(kPair),
                                     M, N, K, map_a, map_b, C);
  return true;
}

}  // namespace wgmma_fp8_v22
