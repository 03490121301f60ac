// Conv v15 — Hopper (sm_90a): v14 in clusters of two CTAs that share their
// filter tile through TMA multicast. bf16 x and w, fp32 accumulation, bf16 y
// (conv2d_nhwc: x (N,H,W,C), w (K,R,S,C), y (N,P,Q,K)).
//
// Idea: a k-step of v14 copies a TILE_M x 64 tile of x and a BN x 64 tile of
//   w into shared memory, and what TMA can copy per second may bound it
//   before the tensor cores do (lesson 05, section 3: 51, 64 and 85 FLOPs a
//   copied byte at the three ResNet layers). Two CTAs whose pixel tiles are
//   neighbours (tiles 2p and 2p + 1, the same output channels) need the same
//   w tile at every k-step. Launched as a cluster of two, each copies half
//   of it with a multicast TMA, which lands in both CTAs' stage and counts
//   on both CTAs' full barriers, so a CTA copies its x tile and half of the w
//   tile: 57, 85 and 128 FLOPs a copied byte at the three layers.
//   This is matmul v21's change to v16, on v14's tiles; the pieces are
//   v21's (kernels/common/cluster_pairs.hpp):
//   - the pair walk: cluster c takes pairs c, c + clusters, ...; CTA r of a
//     pair takes pixel tile 2p + r (PairWalk, with M = N·P·Q pixels and
//     N = K output channels);
//   - the ring: a stage is refilled only when the consumers of both CTAs are
//     done with it (either producer's multicast writes into both), so each
//     consumer warp releases a stage on both CTAs' empty barriers, 16
//     arrivals a phase (24 with three consumers; release_stage_to_both);
//   - cluster_sync() publishes the barriers, and every thread ends in it: no
//     CTA may exit while its peer can still write into its shared memory.
//   What is v14's: the im2col copy of x (conv_v14::load_pixels), the tile
//   sizes (Config, tile_rows: two consumer warpgroups, or three on 192-pixel
//   tiles), the consumers (conv_v13::accumulate_tile, here with
//   ReleaseBoth), the epilogue (conv_v14::store_pixels). Three consumers
//   where the busiest SM then computes fewer outputs (consumers_for, v14's
//   rule over pairs: at issue 5's 14x14 layer on an H200, 66 pairs of
//   192 x 128 tiles for 66 clusters where 128 x 256 tiles make 49 pairs, 98
//   CTAs busy), or, on a GPU, where the registration's tune timed them
//   faster (src/device/kernels/conv/tile_tune.hpp).
//   When the pixel tiles are odd in number, the last pair's second tile lies
//   past N·P·Q: its copies of x read the first pixels instead
//   (PairWalk::copied_tile: no copy starts past the last image), it still
//   copies its half of w for its peer, and it stores nothing.
// Edges and precision: v14's; shapes TMA cannot describe run v13's direct kernel.
// Changed from v14: clusters of 2 along the pixels; w multicast, half per
//   CTA (its map's boxes are BN / 2 channels); empty barriers of 16 warp
//   arrivals from both CTAs; cluster_sync() at start and end; persistent
//   over tile pairs.
// Measured: not yet on a GPU (written 2026-12-05, after the last H200 run).
//   Emulator: matches the CPU at every conv2d_nhwc test size (the TMA path
//   at eight of them), its clusters' CTAs run together on one worker.
//   ptxas (nvcc 13, sm_90a; bench/results/ptxas-sm90a-2026-12-07.txt): 107, 91
//   and 168 registers at BN = 64, 128, 256; at 256, under the 168 a
//   384-thread block is compiled for, no spills, as v14; with three
//   consumers 59 and 91.
// Build: sm_90a only, as v13 and v14 (src/device/CMakeLists.txt).
// Run: build/bin/warpnet bench conv2d_nhwc --kernels 14,15 on an H100/H200;
//   on the emulator: build/bin/warpnet trace conv2d_nhwc/15 --size 1,8,5,131,16,3,3,1,1,1
#include "kernels/common/cluster_pairs.hpp"
#include "kernels/conv/14_implicit_gemm_im2col.cu"  // conv_v14 (and conv_v13): tiles, copies, consumers, epilogue

namespace conv_v15 {

using warpnet::kPair;
constexpr int GROUP_M = 8;  // pixel tiles per group of the pair walk (pair_tile)

#if WARPNET_HOPPER_PTX
// A consumer warp hands a stage back to both CTAs' producers.
struct ReleaseBoth {
  __device__ void operator()(uint64_t* empty) const { warpnet::release_stage_to_both(empty); }
};
#endif

}  // namespace conv_v15

// map_x: v14's im2col map (tile_rows(BN, CONSUMERS) pixels a copy); map_w:
// v14's, in boxes of BN / 2 output channels (both made by conv_v15::launch);
// y: (N,P,Q,K) bf16. BN = conv_v14::channel_tile(K, CONSUMERS).
// Launch: clusters of 2 CTAs along x (launch_kernel_in_clusters); block
// ((CONSUMERS + 1)·128) = producer + 2 or 3 consumer warpgroups; grid (2 x
// clusters), any number of clusters (persistent_blocks); dynamic shared
// conv_v14::Config<BN, CONSUMERS>::kSharedBytes. sm_90a only.
template <int BN, int CONSUMERS>
__global__ void __launch_bounds__((CONSUMERS + 1) * 128, 1)
    conv2d_implicit_gemm_cluster(ConvShape g, int pixels, const __grid_constant__ CUtensorMap map_x,
                                 const __grid_constant__ CUtensorMap map_w, __nv_bfloat16* __restrict__ y) {
#if WARPNET_HOPPER_PTX
  using namespace conv_v13;
  using Cfg = conv_v14::Config<BN, CONSUMERS>;
  constexpr int TILE_M = conv_v14::tile_rows(BN, CONSUMERS), HALF = BN / conv_v15::kPair;
  // The empty barriers count one arrival from each consumer warp of both CTAs.
  const warpnet::ClusterRing ring = warpnet::cluster_ring(wgmma_v16::STAGES, Cfg::STAGE, CONSUMERS * 4);
  const warpnet::PairWalk walk(pixels, g.K, TILE_M, BN, conv_v15::GROUP_M);
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const int channel_blocks = ::warpnet::ceil_div(g.C, BK), taps = g.R * g.S;

  if (wg == 0) {  // producer: one thread keeps the ring full
    // The whole warpgroup gives registers back first.
    if constexpr (Cfg::kReallocate) warpnet::ptx::setmaxnreg_dec<wgmma_v16::PRODUCER_REGISTERS>();
    if (t == 0)
      produce<Cfg::STAGE>(ring, walk.first, walk.pairs, walk.stride, taps, channel_blocks,
                          [&](unsigned char* a, uint64_t* bar, int pair, int tap, int c0) {
        const warpnet::PairTile at = walk.copied_tile(walk.tile(pair));  // row0: the first pixel; col0: the first output channel
        conv_v14::load_pixels(a, &map_x, g, at.row0, tap, c0, bar);
        // This CTA's half of the w tile, into the same rows of both CTAs' stage.
        warpnet::ptx::tma_load_3d_multicast(a + Cfg::TileA::BYTES + walk.rank * HALF * 128, &map_w, c0, tap,
                                            at.col0 + int(walk.rank) * HALF, bar, warpnet::kBothCtas);
      });
  } else {  // consumer warpgroup: tile rows (pixels) m0..m0 + TILE_M/CONSUMERS - 1, 64 to a subtile
    if constexpr (Cfg::kReallocate) warpnet::ptx::setmaxnreg_inc<wgmma_v16::CONSUMER_REGISTERS>();
    const int m0 = (wg - 1) * (TILE_M / CONSUMERS);
    float acc[Cfg::SUBTILES][Cfg::ACCUMULATORS];
    int it = 0;
    for (int pair = walk.first; pair < walk.pairs; pair += walk.stride) {
      const warpnet::PairTile at = walk.tile(pair);
      accumulate_tile<Cfg, BN>(ring, it, taps * channel_blocks, m0, acc, conv_v15::ReleaseBoth{});
      conv_v14::store_pixels<Cfg, BN>(acc, y, g, pixels, at.row0, at.col0, m0, t);
    }
  }
  warpnet::ptx::cluster_sync();  // the peer may still multicast into this CTA or arrive on its barriers until here
#elif defined(__CUDA_ARCH__)
  __trap();  // compiled for a GPU without wgmma/TMA (sm_80/89/90, plain sm_90): never a silent wrong answer
#endif
}

namespace conv_v15 {

// The pairs of pixel tiles (by K's tiles) of a layer, with `consumers`
// consumer warpgroups (v14's tiles: conv_v14::tiles_with).
inline int pair_count(const ConvShape& g, int consumers = 2) {
  const int bn = conv_v14::channel_tile(g.K, consumers);
  return warpnet::pair_count(g.N * g.P * g.Q, g.K, conv_v14::tile_rows(bn, consumers), bn);
}

// Two consumer warpgroups or three, as conv_v14::consumers_for: the
// busiest SM runs ceil(pairs / clusters) tiles, a cluster on 2 of the `sms`;
// three where that is fewer outputs, two on a tie. At issue 5's 14x14
// layer on an H200: 66 pairs of 192 x 128 tiles for 66 clusters where
// 128 x 256 tiles make 49 pairs (98 CTAs); at 28x28 and 56x56 they tie (2
// rounds against 3, 8 against 6). Arithmetic, not a measurement.
inline int consumers_for(const ConvShape& g, int sms) {
  const int clusters = sms / kPair > 0 ? sms / kPair : 1;
  const auto busiest_outputs = [&](int consumers) {
    const int bn = conv_v14::channel_tile(g.K, consumers);
    return int64_t(::warpnet::ceil_div(pair_count(g, consumers), clusters)) * conv_v14::tile_rows(bn, consumers) * bn;
  };
  return busiest_outputs(3) < busiest_outputs(2) ? 3 : 2;
}

// The persistent grid: as many clusters as the GPU holds at once of the
// kernel that runs at g's K with `consumers`, fewer when there are fewer pairs.
inline int persistent_blocks(const ConvShape& g, int consumers = 2) {
  const int resident = conv_v14::with_tile(g, consumers, [&]<int BN, int CONSUMERS>() {
    using Cfg = conv_v14::Config<BN, CONSUMERS>;
    return warpnet::resident_clusters(conv2d_implicit_gemm_cluster<BN, CONSUMERS>, Cfg::THREADS, Cfg::kSharedBytes,
                                      wgmma_v16::sm_count());
  });
  return warpnet::cluster_blocks(pair_count(g, consumers), resident);
}

// Makes both maps and launches `blocks` blocks (a multiple of kPair) of the
// kernel with CONSUMERS consumer warpgroups, BN wide, in clusters; false
// (nothing launched) when the driver refuses a map (conv_v14::describable()
// shapes only).
template <int BN, int CONSUMERS>
bool launch(int blocks, const ConvShape& g, const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y) {
  using Cfg = conv_v14::Config<BN, CONSUMERS>;
  CUtensorMap map_x, map_w;
  if (!conv_v14::make_maps(&map_x, &map_w, g, x, w, conv_v14::tile_rows(BN, CONSUMERS), BN / kPair)) return false;
  warpnet::launch_kernel_in_clusters(conv2d_implicit_gemm_cluster<BN, CONSUMERS>, dim3(blocks), dim3(Cfg::THREADS),
                                     Cfg::kSharedBytes, dim3(kPair), g, g.N * g.P * g.Q, map_x, map_w, y);
  return true;
}

}  // namespace conv_v15
