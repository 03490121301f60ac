// GEMM v16 — Hopper (sm_90a): v13's TMA + mbarrier + wgmma pipeline with a
// 128x256 C tile, register reallocation and a persistent grid. bf16 inputs,
// fp32 accumulation.
//
// Idea: v13 (79% of cuBLAS bf16 at 4096^3) loses time in three places this
//   version goes after:
//   - Operand traffic per FLOP. A 128x128 tile reads 128 + 128 rows of
//     operands per 128x128 outputs; 128x256 reads 128 + 256 per 128x256, a
//     quarter less shared-memory and L2 traffic per FLOP (3/256 against 1/64). Each consumer
//     warpgroup now issues wgmma m64n256k16, the widest there is: 64x256 fp32
//     accumulators = 128 registers per thread.
//   - Registers. A 384-thread block gets 168 registers per thread; 128 of a
//     consumer's are accumulators. The producer warpgroup needs few, so it
//     gives registers back (setmaxnreg.dec to 40) and the two consumer
//     warpgroups take them (setmaxnreg.inc to 232): 128 x 40 + 256 x 232 =
//     64,512 of the SM's 65,536. ptxas (nvcc 13, -Xptxas -v) fits this kernel
//     in 168 registers without spilling, so the headroom is for what a faster
//     epilogue or deeper wgmma overlap will hold, not yet used.
//   - Launch waves and epilogues. v13 launches one block per tile; here a
//     persistent grid of min(tiles, SMs) blocks each walks tiles
//     blockIdx.x, blockIdx.x + gridDim.x, ... The mbarrier ring runs on
//     across tiles (one k-step counter per block, phases keep flipping), so
//     while the consumers store one tile from their registers the producer
//     is already loading the next one into the stages they have released.
//     Tile t is found in groups of GROUP_M tile rows walked column by column
//     (tile_at): at 8192^3 the 132 tiles that run at once on an H200 cover
//     8 tile rows and about 16 tile columns, so they share their A rows and
//     B columns through L2.
//   - The last round (off unless WARPNET_STREAM_K=1). When the tiles are not
//     a whole number of rounds of the grid (8192^3: 2048 tiles, 15.5 rounds
//     of 132), the last round's tiles can be shared out by k-steps among all
//     the blocks (stream-K, kernels/common/stream_k.hpp): a block whose piece
//     starts inside a tile leaves its partial sums in a workspace, and the
//     block holding the tile's first k-steps adds them in before it stores.
//     That waiting needs every block resident at once, which one block per
//     SM gives; the registration makes the workspace only then. Measured
//     (H200, 2026-12-04), it did not pay: at 8448x8192x8192, 16 whole
//     rounds, v16 ran at 95.9% of cuBLAS against 96.7% at 8192^3, so the
//     half-empty round was not what held it back; with stream-K (its first
//     signalling, every thread polling) 97.1% at 8192^3, within the day's
//     spread (92.5-97.6%), and 81.7% at 4096^3 against 96.0%, some 35 us
//     more a launch (nvidia-h200-2026-12-04-streamk.json, -whole-tiles.json).
//   Block: 3 warpgroups = 384 threads; warpgroup 0 produces (one thread issues
//   the copies), warpgroups 1 and 2 each own 64 rows of the 128x256 tile.
//   Stages: a 128x64 A tile (16 KiB) + a 256x64 B tile (32 KiB) = 48 KiB;
//   4 stages (196,608 bytes + 1024 to align + 8 mbarriers) fit in the 227 KiB
//   of opt-in shared memory, 5 would not.
// Layouts and descriptors: v13's (its Operand, descriptor, store_accumulators,
//   tensor-map encoder; this file includes 13_wgmma_tma.cu), with B 256 rows
//   deep. Row-major A and stored-transposed B (k contiguous) are K-major
//   tiles (trans bit 0): one TMA box {64 k, 128 m} for A and {64 k, 256 n}
//   for B (256, TMA's largest box side); rows of 128 bytes, SBO = 1024 between
//   groups of 8 rows, LBO unused, the k16 step advances the start 32 bytes.
//   Stored-transposed A and row-major B (m or n contiguous) are MN-major tiles
//   (trans bit 1), copied as 64-wide boxes {64 m/n, 64 k} of 8 KiB: A as 2 of
//   them, B's 256 columns as 4. In a box, row k holds 64 m/n in 128 bytes;
//   SBO = 1024 between groups of 8 k; LBO = 8192, the step from one box to
//   the next, which is how one m64n256 wgmma's descriptor reaches all four
//   boxes of B (columns 64j.. come from box j); the k16 step advances the
//   start 2048 bytes (16 rows of 128). Every tile starts 1024-byte aligned
//   (A 16 KiB, B 32 KiB), as the hardware's swizzle of the final address needs.
// Edges: TMA zero-fills boxes past M, N, K; the epilogue guards every store.
//   TMA needs every row stride a multiple of 16 bytes (the contiguous
//   dimension of A and of B a multiple of 8); other shapes are launched as v12
//   by the registration (16_wgmma_persistent.cpp), as v13's does.
// Precision: inputs rounded to bf16 (relative error 2^-8 each), products exact,
//   sums in fp32 accumulators, as v13.
// Changed from v13: a 128x256 tile and wgmma m64n256k16 instead of 128x128 and
//   m64n128k16; setmaxnreg (40 producer, 232 consumers); a persistent grid of
//   min(tiles, SMs) blocks walking tiles in L2-friendly groups, the ring and
//   its phases carried from tile to tile, the last round's tiles shared by
//   k-steps when asked; 48 KiB stages instead of 32 KiB.
// Next: 2-CTA clusters with TMA multicast (one load feeds two SMs) are v21
//   (on the emulator, not yet timed). Not yet: a TMA store epilogue from
//   shared memory, two consumer warpgroups on alternating tiles ("ping-pong", so
//   one's epilogue hides under the other's wgmmas), splitting K for grids
//   of fewer tiles than SMs.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   0.187 ms = 735 TFLOP/s at 4096^3, 96.5% of cuBLAS bf16 in the same run; 774 TFLOP/s at 8192^3, 97.6%.
// Build: sm_90a only, as v13 (src/device/CMakeLists.txt, sm90a_registrations).
// Run: build/bin/warpnet bench matmul --size 8192,8192,8192 --kernels matmul/13,matmul/16
//   on an H100/H200 (cuBLAS, version 0, is timed in the same run); on the
//   emulator: build/bin/warpnet trace matmul/16 --size 144,80,48
// Once a translation unit: conv v16 includes conv v14 and matmul v20, and
// both include this file (it is the one shared root of the two chains).
#pragma once
#include <cstdint>

#include "kernels/common/hopper.hpp"
#include "kernels/common/stream_k.hpp"
#include "kernels/common/tile_order.hpp"
#include "kernels/matmul/13_wgmma_tma.cu"  // wgmma_v13: Operand, descriptor, store_accumulators, make_map

namespace wgmma_v16 {

using wgmma_v13::BK;  // 64 k = one 128-byte swizzle row of bf16
constexpr int BM = 128, BN = 256, STAGES = 4;
constexpr int CONSUMERS = 2, THREADS = (CONSUMERS + 1) * 128;  // warpgroup 0 produces
constexpr int WG_M = 64, WGMMA_K = 16;                         // one wgmma: m64 n256 k16
constexpr int ACCUMULATORS = BN / 2;                           // per consumer thread: 64 x 256 / 128
constexpr int PRODUCER_REGISTERS = 40, CONSUMER_REGISTERS = 232;
constexpr int GROUP_M = 8;  // tile rows per group of the persistent walk (tile_at)
constexpr int kConsumerThreads = CONSUMERS * 128;
constexpr int kPartialFloats = ACCUMULATORS * kConsumerThreads;  // one stream-K slot: a 128x256 tile
static_assert(BM == CONSUMERS * WG_M, "a consumer warpgroup per 64 rows");
static_assert(128 * PRODUCER_REGISTERS + CONSUMERS * 128 * CONSUMER_REGISTERS <= 65536,
              "the reallocated registers fit the SM's register file");
// setmaxnreg moves registers within the block's allocation: a consumer's
// .inc waits until the producer's .dec has freed enough, so a block launched
// with fewer than this many a thread never gets them. Not an error: a hang.
constexpr int LAUNCH_REGISTERS =
    warpnet::ceil_div(128 * PRODUCER_REGISTERS + CONSUMERS * 128 * CONSUMER_REGISTERS, THREADS);  // 168

// The registers a thread of `kernel` holds at launch (ptxas's count); 0 on
// the emulator, which has none to count and ignores setmaxnreg.
template <class... P>
int launch_registers(void (*kernel)(P...)) {
#if defined(__CUDACC__)
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, kernel) == cudaSuccess ? attributes.numRegs : 0;
#else
  (void)kernel;
  return 0;
#endif
}

template <bool TA>
using OperandA = wgmma_v13::Operand<TA, BM>;  // A stored (K,M) when TA: m contiguous
template <bool TB>
using OperandB = wgmma_v13::Operand<!TB, BN>;  // B stored (K,N) unless TB: n contiguous

template <bool TA, bool TB>
constexpr uint32_t kStageBytes = OperandA<TA>::BYTES + OperandB<TB>::BYTES;
// The dynamic shared memory of the ring make_ring lays out (v16, v19, v20):
// STAGES stages, up to 1024 bytes to align them, the 2 x STAGES mbarriers.
constexpr size_t ring_bytes(uint32_t stage_bytes) { return size_t(STAGES) * stage_bytes + 1024 + 2 * STAGES * 8; }
template <bool TA, bool TB>
constexpr size_t kSharedBytes = ring_bytes(kStageBytes<TA, TB>);
static_assert(kSharedBytes<false, false> <= 227 * 1024 &&
                  kSharedBytes<false, false> + kStageBytes<false, false> > 227 * 1024,
              "as many stages as the 227 KiB opt-in allows");

struct Tile {
  int row0, col0;  // C's first row and column of the tile
};
// Tile t (0 <= t < tiles_m * tiles_n) of the persistent walk: groups of
// GROUP_M tile rows, each walked column by column (warpnet::grouped_tile),
// so consecutive t — the tiles that run at the same time — share their A
// rows and B columns.
__host__ __device__ constexpr Tile tile_at(int t, int tiles_m, int tiles_n) {
  const warpnet::TileIndex at = warpnet::grouped_tile(t, tiles_m, tiles_n, GROUP_M);
  return Tile{at.m * BM, at.n * BN};
}

#if WARPNET_HOPPER_PTX
// The producer's copies of k-step k0 of tile `at` into one stage: its A tile
// at `a`, its B tile at `b`, the bytes counted on `full`. One thread issues
// them (v16, v19; v20 with its fp32 operand tiles). An MN-major tile is
// copied as boxes BOX_INNER wide along m or n.
template <bool TA, bool TB, class OpA = OperandA<TA>, class OpB = OperandB<TB>>
__device__ __forceinline__ void load_stage(unsigned char* a, unsigned char* b, const CUtensorMap* map_a,
                                           const CUtensorMap* map_b, Tile at, int k0, uint64_t* full) {
  using namespace warpnet::ptx;
  mbarrier_arrive_expect_tx(full, OpA::BYTES + OpB::BYTES);  // whole boxes count, zero-filled parts included
  for (int box = 0; box < OpA::BOXES; ++box)
    if constexpr (TA) tma_load_2d(a + box * OpA::BOX_BYTES, map_a, at.row0 + OpA::BOX_INNER * box, k0, full);  // {M, K}
    else tma_load_2d(a, map_a, k0, at.row0, full);                                                            // {K, M}
  for (int box = 0; box < OpB::BOXES; ++box)
    if constexpr (TB) tma_load_2d(b, map_b, k0, at.col0, full);                                               // {K, N}
    else tma_load_2d(b + box * OpB::BOX_BYTES, map_b, at.col0 + OpB::BOX_INNER * box, k0, full);              // {N, K}
}

// The ring in dynamic shared memory (v16, v19, v20; ring_bytes(stage_bytes)
// of it): STAGES stages of `stage_bytes` from a 1024-byte-aligned base (the 128-byte swizzle repeats
// every 1024 bytes), then full[STAGES] and empty[STAGES]. Stage s holds its
// A tile at base + s * stage_bytes and its B tile right after.
struct Ring {
  unsigned char* base;
  uint64_t* full;   // completed by the producer's arrive.expect_tx and TMA's bytes
  uint64_t* empty;  // completed by every consumer thread's arrive
};
// Called by the whole block: thread 0 initializes the barriers, and the
// block meets before anyone uses them. An empty barrier's phase completes
// when all `consumer_threads` have arrived (conv v14's tiles of three
// consumer warpgroups count 384).
__device__ __forceinline__ Ring make_ring(uint32_t stage_bytes, int consumer_threads = kConsumerThreads) {
  using namespace warpnet::ptx;
  unsigned char* raw = warpnet::dynamic_shared<unsigned char>();
  unsigned char* base = raw + (1024 - shared_address(raw) % 1024) % 1024;
  uint64_t* full = reinterpret_cast<uint64_t*>(base + STAGES * stage_bytes);
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&full[STAGES + s], consumer_threads);
    }
    fence_mbarrier_init();  // visible to the copy engine
  }
  __syncthreads();
  return Ring{base, full, full + STAGES};
}

// The producer, one thread: walks the block's work (BlockWork: its whole
// tiles, then its stream-K pieces when `plan` has them) and keeps the ring
// full. Producer and consumers count the block's k-steps alike, across
// tiles: step `it` uses stage it % STAGES in round it / STAGES, whose full
// phase has parity round & 1 and whose empty phase of round - 1 freed it.
// bk: the k extent of a stage (64 bf16, 32 fp32: one 128-byte row).
template <bool TA, bool TB, class OpA = OperandA<TA>, class OpB = OperandB<TB>>
__device__ __forceinline__ void produce(const Ring& ring, const CUtensorMap* map_a, const CUtensorMap* map_b,
                                        const warpnet::StreamK& plan, int tiles_m, int tiles_n, int bk) {
  using namespace warpnet::ptx;
  constexpr uint32_t STAGE = OpA::BYTES + OpB::BYTES;
  int it = 0;
  warpnet::BlockWork work(plan, int(blockIdx.x), int(gridDim.x));
  for (warpnet::Work w; work.next(w);) {
    const Tile at = tile_at(w.tile, tiles_m, tiles_n);
    for (int step = w.k_begin; step < w.k_end; ++step, ++it) {
      const int s = it % STAGES;
      if (it >= STAGES) mbarrier_wait(&ring.empty[s], (it / STAGES - 1) & 1);  // round r-1 released it
      unsigned char* a = ring.base + s * STAGE;
      load_stage<TA, TB, OpA, OpB>(a, a + OpA::BYTES, map_a, map_b, at, step * bk, &ring.full[s]);
    }
  }
}
#endif

}  // namespace wgmma_v16

// map_a: A, (M,K) row-major bf16, or (K,M) when TA; map_b: B, (K,N) row-major
// bf16, or (N,K) when TB (CUtensorMaps made by wgmma_v16::launch);
// C: (M,N) row-major fp32. C = op(A) @ op(B). workspace: stream-K's
// (stream_k_bytes(blocks, kPartialFloats), its flags zero), or null: every
// tile walked whole.
// Launch: block (384) = producer + 2 consumer warpgroups; grid (blocks), any
// number of blocks (persistent_blocks: min(tiles, SMs)), all resident at
// once when there is a workspace; dynamic shared kSharedBytes<TA, TB>.
// sm_90a only.
template <bool TA = false, bool TB = false>
__global__ void __launch_bounds__(wgmma_v16::THREADS, 1)
    gemm_wgmma_persistent(int M, int N, int K, const __grid_constant__ CUtensorMap map_a,
                          const __grid_constant__ CUtensorMap map_b, float* __restrict__ C, void* workspace) {
#if WARPNET_HOPPER_PTX
  using namespace wgmma_v16;
  using namespace warpnet::ptx;
  using wgmma_v13::store_accumulators;
  using wgmma_v13::descriptor;
  using OpA = OperandA<TA>;
  using OpB = OperandB<TB>;
  constexpr uint32_t STAGE = kStageBytes<TA, TB>;
  const Ring ring = make_ring(STAGE);
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const int tiles_m = warpnet::ceil_div(M, BM), tiles_n = warpnet::ceil_div(N, BN), tiles = tiles_m * tiles_n;
  const int k_steps = warpnet::ceil_div(K, BK);
  const warpnet::StreamK plan = warpnet::plan_stream_k(tiles, k_steps, int(gridDim.x), workspace != nullptr);

  if (wg == 0) {  // producer: one thread keeps the ring full (produce)
    setmaxnreg_dec<PRODUCER_REGISTERS>();  // the whole warpgroup, before any thread leaves
    if (t == 0) produce<TA, TB>(ring, &map_a, &map_b, plan, tiles_m, tiles_n, BK);
  } else {  // consumer wg: rows m0..m0+63 of each tile
    setmaxnreg_inc<CONSUMER_REGISTERS>();
    const int m0 = (wg - 1) * WG_M;
    float acc[ACCUMULATORS];
    int it = 0;
    warpnet::BlockWork work(plan, int(blockIdx.x), int(gridDim.x));
    for (warpnet::Work w; work.next(w);) {
      const Tile at = tile_at(w.tile, tiles_m, tiles_n);
#pragma unroll
      for (int i = 0; i < ACCUMULATORS; ++i) acc[i] = 0.0f;
      // Counted from 0, not from w.k_begin: with the loop from k_begin to
      // k_end, ptxas (nvcc 13) serializes the wgmmas (warning C7515: other
      // instructions define the accumulators inside the pipeline).
      const int steps = w.k_end - w.k_begin;
      for (int step = 0; step < steps; ++step, ++it) {
        const int s = it % STAGES;
        mbarrier_wait(&ring.full[s], (it / STAGES) & 1);  // TMA's bytes of this round have landed
        const uint32_t a = shared_address(ring.base + s * STAGE), b = a + OpA::BYTES;
        wgmma_fence();  // the accumulators' earlier register writes (the zeros too) come first
#pragma unroll
        for (int kk = 0; kk < BK; kk += WGMMA_K)
          wgmma_m64n256k16_bf16<TA ? 1 : 0, TB ? 0 : 1>(acc, descriptor(a + OpA::start(m0, kk), OpA::LBO, OpA::SBO),
                                                        descriptor(b + OpB::start(0, kk), OpB::LBO, OpB::SBO));
        wgmma_commit();
        // Keep this step's group in flight; the previous one is done, so its stage is free.
        wgmma_wait<1>();
        if (step > 0) mbarrier_arrive(&ring.empty[(it - 1) % STAGES]);
      }
      // The piece's last group: retired before its stage goes back and the
      // registers are read. The producer, which waits only on empty
      // barriers, is meanwhile filling the next piece's stages.
      wgmma_wait<0>();
      if (steps > 0) mbarrier_arrive(&ring.empty[(it - 1) % STAGES]);
      // A piece of a shared tile: its sums handed on, or the others' added in.
      if (!warpnet::stream_k_piece_done<ACCUMULATORS, kConsumerThreads>(acc, workspace, plan, w, int(blockIdx.x),
                                                                        int(threadIdx.x) - 128))
        continue;
      store_accumulators(acc, C, M, N, at.row0 + m0, at.col0, t);
    }
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // compiled for a GPU without wgmma/TMA (sm_80/89/90, plain sm_90): never a silent wrong answer
#endif
}

namespace wgmma_v16 {

inline int tile_count(int M, int N) { return warpnet::ceil_div(M, BM) * warpnet::ceil_div(N, BN); }

// The SMs of the current device: under nvcc one attribute (cheap enough to
// ask at every launch, which the registry's shape does); the emulator answers
// cudaGetDeviceProperties with its worker threads, which a test may change
// between launches.
inline int sm_count() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 1;
#if defined(__CUDACC__)
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) return 1;
#else
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return 1;
  sms = prop.multiProcessorCount;
#endif
  return sms > 0 ? sms : 1;
}

// The persistent grid: a block per SM, fewer when there are fewer tiles.
inline int persistent_blocks(int M, int N) {
  const int tiles = tile_count(M, N), sms = sm_count();
  return tiles < sms ? (tiles > 0 ? tiles : 1) : sms;
}

// Makes both maps and launches `blocks` blocks; false (nothing launched) when
// the driver refuses a map (wgmma_v13::describable() operands only: anything
// else is the caller's to route).
template <bool TA, bool TB>
bool launch(int blocks, int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* B, float* C,
            void* workspace) {
  using wgmma_v13::make_map;
  CUtensorMap map_a, map_b;
  const bool made_a = TA ? make_map(&map_a, A, M, K, OperandA<TA>::BOX_OUTER) : make_map(&map_a, A, K, M, OperandA<TA>::BOX_OUTER);
  const bool made_b = TB ? make_map(&map_b, B, K, N, OperandB<TB>::BOX_OUTER) : make_map(&map_b, B, N, K, OperandB<TB>::BOX_OUTER);
  if (!made_a || !made_b) return false;
  constexpr size_t shared = kSharedBytes<TA, TB>;
  warpnet::launch_kernel_opted_in(gemm_wgmma_persistent<TA, TB>, dim3(blocks), dim3(THREADS), shared, M, N, K, map_a,
                                  map_b, C, workspace);
  return true;
}

}  // namespace wgmma_v16
