// GEMM v21 — Hopper (sm_90a): v16's persistent wgmma pipeline in clusters of
// two CTAs that share their B tile through TMA multicast. bf16 inputs, fp32
// accumulation.
//
// Idea: v16 (96% of cuBLAS bf16 at 8192^3 on an H200) reads every operand
//   tile from L2 once per CTA that uses it. At 8192^3 its 2,048 tiles of
//   128x256 each read 128 rows of A and 256 of B, 64 k at a time: 12.9 GB
//   from L2 in 1.45 ms, about 9 TB/s (whether L2 is what holds v16 back,
//   only this version's run on a GPU can say).
//   Two CTAs whose tiles lie one above the other (tile rows 2p and 2p + 1,
//   the same tile column) need the same B tile. Launched as a cluster of
//   two, they can load it once: each CTA's producer copies half of the B
//   tile with a multicast TMA, which writes it into the same stage of both
//   CTAs' shared memory and counts its bytes on both CTAs' `full` barriers.
//   Per k-step a CTA then reads its 16 KiB A tile and half of the 32 KiB B
//   tile from L2, 32 KiB instead of 48: a third less L2 traffic for the same
//   FLOPs.
// What changes because a stage is now shared between the two CTAs:
//   - A stage may be refilled only when the consumers of both CTAs are done
//     with it, since either producer's multicast writes into both. Each
//     consumer warp releases a stage on both CTAs' `empty` barriers (lane r
//     arrives on CTA r's, mbarrier_arrive_cluster): 8 warps x 2 CTAs = 16
//     arrivals a phase, where v16 counts its own 256 consumer threads. A
//     warp may release for all its lanes because wgmma.wait_group is
//     .sync.aligned: every lane has retired the group when lane r arrives.
//   - Each CTA still arms its own `full` barrier for the whole stage (its A
//     tile and both halves of B); the peer's half may land before the arm,
//     which mbarriers allow (a phase's transaction count may dip below zero).
//   - The two CTAs walk the same tile pairs (persistent over pairs: cluster c
//     of the grid's takes pairs c, c + clusters, ...), so their k-steps, and
//     the stages they fill, stay in step.
//   - The barriers are published with cluster_sync() instead of
//     __syncthreads(), and every thread ends in cluster_sync(): no CTA may
//     exit while its peer can still write into its shared memory or arrive
//     on its barriers.
//   The pair walk, the ring and the release are kernels/common/cluster_pairs.hpp,
//   shared with v22 (the same in fp8).
// Tiles, stages, descriptors, register split, epilogue: v16's (128x256 C
//   tiles, 4 stages of 48 KiB, one producer warpgroup with one issuing
//   thread, two consumer warpgroups of wgmma m64n256k16). A K-major B tile is
//   copied as two 128-row boxes, one per CTA; an MN-major one as v16's four
//   64-wide boxes, two per CTA. When M has an odd number of tile rows, the
//   last pair's second tile lies past M: its A copies read rows from 0 on
//   instead (PairWalk::copied_tile), it still loads its half of B for its
//   peer, and its epilogue stores nothing.
// Edges: TMA zero-fills boxes past M, N, K; the epilogue guards every store.
//   Shapes TMA cannot describe are launched as v12 by the registration, as
//   for v13 and v16. No stream-K (v16's measured no gain).
// Precision: inputs rounded to bf16, products exact, sums in fp32 (v16's).
// Changed from v16: clusters of 2 along M; B multicast, half per CTA; empty
//   barriers of 16 warp arrivals from both CTAs; cluster_sync() at start and
//   end; persistent over tile pairs.
// Emulator: the cluster's two CTAs run together on one worker
//   (src/simt/cluster.hpp), the multicast lands in both, and the hazards a
//   GPU would not report (a stage refilled while the peer's wgmma still reads
//   it, a peer's barrier used before cluster_sync(), a CTA exiting under its
//   peer's copy) stop the launch.
// Measured: not yet on a GPU (written 2026-12-05; the next lent H200's
//   `gpu-check.sh` times it beside v16 and cuBLAS).
// Build: sm_90a only, as v13 and v16. Run: build/bin/warpnet trace matmul/21
//   --size 272,80,48 on the emulator; build/bin/warpnet bench matmul --size
//   8192,8192,8192 --kernels matmul/16,matmul/21 on an H100/H200.
#include <cstdint>

#include "kernels/common/cluster_pairs.hpp"
#include "kernels/common/hopper.hpp"
#include "kernels/matmul/16_wgmma_persistent.cu"  // wgmma_v16: Operand, kSharedBytes, v13's descriptor and store

namespace wgmma_v21 {

using wgmma_v16::BK;
using wgmma_v16::BM;
using wgmma_v16::BN;
using wgmma_v16::STAGES;
using wgmma_v16::THREADS;
using warpnet::kPair;
constexpr uint32_t CONSUMER_WARPS = wgmma_v16::CONSUMERS * 4;

template <bool TA>
using OperandA = wgmma_v16::OperandA<TA>;
template <bool TB>
using OperandB = wgmma_v16::OperandB<TB>;
// The box B's map is made with: K-major (TB) tiles are copied as kPair boxes
// of BN / kPair rows, one per CTA; MN-major ones as v16's 64-wide boxes.
template <bool TB>
constexpr int B_BOX_OUTER = TB ? BN / kPair : OperandB<TB>::BOX_OUTER;
static_assert(OperandB<false>::BOXES % kPair == 0, "the MN-major B boxes split evenly between the CTAs");

template <bool TA, bool TB>
constexpr size_t kSharedBytes = wgmma_v16::kSharedBytes<TA, TB>;

#if WARPNET_HOPPER_PTX
// One k-step into stage (a, b): this CTA's A tile, and its half of the B
// tile, multicast into both CTAs. `full` is armed for the whole stage.
template <bool TA, bool TB>
__device__ __forceinline__ void load_stage(unsigned char* a, unsigned char* b, const CUtensorMap* map_a,
                                           const CUtensorMap* map_b, warpnet::PairTile at, int k0, unsigned rank,
                                           uint64_t* full) {
  using namespace warpnet::ptx;
  using OpA = OperandA<TA>;
  using OpB = OperandB<TB>;
  mbarrier_arrive_expect_tx(full, OpA::BYTES + OpB::BYTES);  // its A, and both CTAs' halves of B
  for (int box = 0; box < OpA::BOXES; ++box)
    if constexpr (TA) tma_load_2d(a + box * OpA::BOX_BYTES, map_a, at.row0 + OpA::BOX_INNER * box, k0, full);  // {M, K}
    else tma_load_2d(a, map_a, k0, at.row0, full);                                                            // {K, M}
  if constexpr (TB) {  // K-major: rows n of 128 bytes; this CTA's BN / kPair of them
    constexpr int ROWS = BN / kPair;
    tma_load_2d_multicast(b + rank * ROWS * 128, map_b, k0, at.col0 + int(rank) * ROWS, full, warpnet::kBothCtas);  // {K, N}
  } else {  // MN-major: 64-wide boxes along n; this CTA's BOXES / kPair of them
    constexpr int PER_CTA = OpB::BOXES / kPair;
    for (int box = int(rank) * PER_CTA; box < int(rank + 1) * PER_CTA; ++box)
      tma_load_2d_multicast(b + box * OpB::BOX_BYTES, map_b, at.col0 + OpB::BOX_INNER * box, k0, full,
                            warpnet::kBothCtas);  // {N, K}
  }
}
#endif

}  // namespace wgmma_v21

// map_a: A, (M,K) row-major bf16, or (K,M) when TA; map_b: B, (K,N) row-major
// bf16, or (N,K) when TB (CUtensorMaps made by wgmma_v21::launch);
// C: (M,N) row-major fp32. C = op(A) @ op(B).
// Launch: clusters of 2 CTAs along x (launch_kernel_in_clusters); block (384)
// = producer + 2 consumer warpgroups; grid (2 x clusters), any number of
// clusters (persistent_blocks: min(pairs, clusters resident at once));
// dynamic shared kSharedBytes<TA, TB>. sm_90a only.
template <bool TA = false, bool TB = false>
__global__ void __launch_bounds__(wgmma_v16::THREADS, 1)
    gemm_wgmma_cluster(int M, int N, int K, const __grid_constant__ CUtensorMap map_a,
                       const __grid_constant__ CUtensorMap map_b, float* __restrict__ C) {
#if WARPNET_HOPPER_PTX
  using namespace wgmma_v21;
  using namespace warpnet::ptx;
  using wgmma_v13::descriptor;
  using wgmma_v13::store_accumulators;
  using OpA = OperandA<TA>;
  using OpB = OperandB<TB>;
  constexpr uint32_t STAGE = OpA::BYTES + OpB::BYTES;
  const warpnet::ClusterRing ring = warpnet::cluster_ring(STAGES, STAGE, CONSUMER_WARPS);
  const warpnet::PairWalk walk(M, N, BM, BN, wgmma_v16::GROUP_M);
  const unsigned rank = walk.rank;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const int steps = warpnet::ceil_div(K, BK);

  if (wg == 0) {  // producer: one thread keeps the ring full
    setmaxnreg_dec<wgmma_v16::PRODUCER_REGISTERS>();  // the whole warpgroup, before any thread leaves the branch
    if (t == 0) {
      // Both CTAs count the same k-steps: step `it` uses stage it % STAGES in
      // round it / STAGES, freed by round - 1's empty phase in both CTAs.
      int it = 0;
      for (int p = walk.first; p < walk.pairs; p += walk.stride) {
        const warpnet::PairTile at = walk.copied_tile(walk.tile(p));
        for (int step = 0; step < steps; ++step, ++it) {
          const int s = it % STAGES;
          if (it >= STAGES) mbarrier_wait(&ring.empty[s], (it / STAGES - 1) & 1);
          unsigned char* a = ring.base + s * STAGE;
          load_stage<TA, TB>(a, a + OpA::BYTES, &map_a, &map_b, at, step * BK, rank, &ring.full[s]);
        }
      }
    }
  } else {  // consumer wg: rows m0..m0+63 of each tile
    setmaxnreg_inc<wgmma_v16::CONSUMER_REGISTERS>();
    const int m0 = (wg - 1) * wgmma_v16::WG_M;
    float acc[wgmma_v16::ACCUMULATORS];
    int it = 0;
    for (int p = walk.first; p < walk.pairs; p += walk.stride) {
      const warpnet::PairTile at = walk.tile(p);
#pragma unroll
      for (int i = 0; i < wgmma_v16::ACCUMULATORS; ++i) acc[i] = 0.0f;
      for (int step = 0; step < steps; ++step, ++it) {
        const int s = it % STAGES;
        mbarrier_wait(&ring.full[s], (it / STAGES) & 1);  // this CTA's A and both halves of B have landed
        const uint32_t a = shared_address(ring.base + s * STAGE), b = a + OpA::BYTES;
        wgmma_fence();  // the accumulators' earlier register writes (the zeros too) come first
#pragma unroll
        for (int kk = 0; kk < BK; kk += wgmma_v16::WGMMA_K)
          wgmma_m64n256k16_bf16<TA ? 1 : 0, TB ? 0 : 1>(acc, descriptor(a + OpA::start(m0, kk), OpA::LBO, OpA::SBO),
                                                        descriptor(b + OpB::start(0, kk), OpB::LBO, OpB::SBO));
        wgmma_commit();
        wgmma_wait<1>();  // the previous step's group is done: its stage goes back to both producers
        if (step > 0) warpnet::release_stage_to_both(&ring.empty[(it - 1) % STAGES]);
      }
      wgmma_wait<0>();
      if (steps > 0) warpnet::release_stage_to_both(&ring.empty[(it - 1) % STAGES]);
      store_accumulators(acc, C, M, N, at.row0 + m0, at.col0, t);
    }
  }
  cluster_sync();  // the peer may still multicast into this CTA or arrive on its barriers until here
#elif defined(__CUDA_ARCH__)
  __trap();  // compiled for a GPU without wgmma/TMA (sm_80/89/90, plain sm_90): never a silent wrong answer
#endif
}

namespace wgmma_v21 {

// The persistent grid: as many clusters as the GPU holds at once, fewer when
// there are fewer tile pairs (every layout's kernel has the same resources).
inline int persistent_blocks(int M, int N) {
  const int resident = warpnet::resident_clusters(gemm_wgmma_cluster<false, false>, THREADS,
                                                  kSharedBytes<false, false>, wgmma_v16::sm_count());
  return warpnet::cluster_blocks(warpnet::pair_count(M, N, BM, BN), resident);
}

// Makes both maps and launches `blocks` blocks (a multiple of kPair) in
// clusters; false (nothing launched) when the driver refuses a map
// (wgmma_v13::describable() operands only).
template <bool TA, bool TB>
bool launch(int blocks, int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* B, float* C) {
  using wgmma_v13::make_map;
  CUtensorMap map_a, map_b;
  const bool made_a = TA ? make_map(&map_a, A, M, K, OperandA<TA>::BOX_OUTER) : make_map(&map_a, A, K, M, OperandA<TA>::BOX_OUTER);
  const bool made_b = TB ? make_map(&map_b, B, K, N, B_BOX_OUTER<TB>) : make_map(&map_b, B, N, K, B_BOX_OUTER<TB>);
  if (!made_a || !made_b) return false;
  warpnet::launch_kernel_in_clusters(gemm_wgmma_cluster<TA, TB>, dim3(blocks), dim3(THREADS), kSharedBytes<TA, TB>,
                                     dim3(kPair), M, N, K, map_a, map_b, C);
  return true;
}

}  // namespace wgmma_v21
