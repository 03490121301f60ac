// GEMM v18 — Hopper (sm_90a): fp8 e4m3 on v16's persistent 128x256 pipeline.
// v15's number format and operand handling, v16's tile, registers and grid.
//
// Idea: v15 is v13 with one-byte inputs, so it carries v13's costs that v16
//   went after: a 128x128 tile (operand traffic 1/64 per output against
//   3/256 for 128x256), one block per tile (a wave of epilogues with the
//   tensor cores idle), no register reallocation. At fp8's doubled rate the
//   operands must arrive twice as fast for the same tile, so these costs
//   weigh more than in bf16. Here each consumer warpgroup issues wgmma
//   m64n256k32 .e4m3 (128 fp32 accumulators per thread) on a 128x256 C tile;
//   a k-step is one 128-byte swizzle row, 128 k: a stage is A (128 m x 128 k)
//   + B (256 n x 128 k) = 48 KiB, 4 wgmmas per consumer, and 4 stages fit the
//   227 KiB of opt-in shared memory (v16's ring, byte for byte the same size).
//   The producer gives registers back (setmaxnreg 40) and the consumers take
//   them (232); a persistent grid of min(tiles, SMs) blocks walks the tiles in
//   v16's grouped order, the ring running on from tile to tile, so the next
//   tile loads while the last one is stored; a last round that is not whole
//   can be shared out by k-steps among all the blocks (v16's stream-K, off
//   unless WARPNET_STREAM_K=1: on the H200 on 2026-12-04 it ran at 98.7% of
//   cuBLASLt at 8192^3, below the 99.9% and 100.6% of that day's runs
//   without it, and at 84.4% at 4096^3 against 99.6%).
// Layouts: v15's. 8-bit wgmma operands are K-major only, so the kernel takes
//   A stored (M,K) and B stored (N,K); the registration packs any other
//   operand, and any whose row pitch or address TMA cannot take, K-major
//   first (fp8_operands.hpp, pack_k_major), inside the timed region.
// Descriptors: v15's K-major 128-byte-swizzled tiles (wgmma_fp8_v15::stored,
//   SBO 1024, LBO unused); the B box is {128 k, 256 n} (TMA's largest side),
//   read by one m64n256 wgmma as 32 groups of 8 rows. Every tile starts
//   1024-byte aligned (16 and 32 KiB).
// Precision: v15's. Inputs rounded to e4m3; every wgmma adds into the one
//   accumulator, never promoted, so on an H200 all of K sums in about 14
//   significand bits (registration: accumulator_bits = 14, as cuBLASLt's fp8).
// Changed from v15: 128x256 tile and wgmma m64n256k32 (was 128x128 and
//   m64n128k32); 4 stages of 48 KiB (were 7 of 32 KiB); setmaxnreg; a
//   persistent grid in grouped tile order, stream-K for the last round when asked.
// Changed from v16: e4m3 inputs, k32 wgmmas and 128-wide k-steps (were bf16,
//   k16, 64-wide); K-major operands only, the others packed first.
// Checked: the registry's test sizes and layouts on the emulator, plain and
//   traced; tests/simt/test_wgmma_persistent.cpp gives it fewer blocks than
//   tiles (the ring and its parities running on across tiles), in place and
//   packed, and as many workers as blocks with a last round to share
//   (stream-K's partial sums through the workspace, traced too). nvcc 13.0
//   for sm_90a (-Xptxas -v): 168 registers, no spills.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   0.150 ms = 916 TFLOP/s at 4096^3, 100% of cuBLASLt fp8 in the same run; 1.20e3 TFLOP/s at 8192^3, 100%.
//   Both with a row-major B (trans_b = 0), packed K-major first, inside the timed region.
// Build: sm_90a only, as v13 (src/device/CMakeLists.txt, sm90a_registrations).
// Run: build/bin/warpnet bench matmul --size 8192,8192,8192 --kernels matmul/15,matmul/18 on an H100/H200
//   (cuBLASLt fp8 is version 0 for e4m3; --size 8192,8192,8192,0,1 for B stored (N, K), fp8's own layout,
//   no packing); on the emulator:
//   build/bin/warpnet trace matmul/18 --size 144,280,256,0,1
#include <cstdint>

#include "kernels/common/hopper.hpp"
#include "kernels/matmul/16_wgmma_persistent.cu"  // includes 13_wgmma_tma.cu: descriptor, store_accumulators
#include "kernels/matmul/15_wgmma_fp8.cu"         // stored, SBO/LBO, make_map, tma_describable

namespace wgmma_fp8_v18 {

using wgmma_fp8_v15::BK;  // 128 k = one 128-byte swizzle row of e4m3
using wgmma_v16::BM, wgmma_v16::BN, wgmma_v16::CONSUMERS, wgmma_v16::THREADS, wgmma_v16::WG_M;
using wgmma_v16::ACCUMULATORS, wgmma_v16::PRODUCER_REGISTERS, wgmma_v16::CONSUMER_REGISTERS;
constexpr int WGMMA_K = 32;  // one wgmma: m64 n256 k32
constexpr uint32_t TILE_A = BM * BK, TILE_B = BN * BK, STAGE = TILE_A + TILE_B;  // bytes
static_assert(TILE_A % 1024 == 0 && STAGE % 1024 == 0, "every tile on a 1024-byte swizzle boundary");
// Dynamic shared memory: as many stages as the opt-in limit holds, 1024 bytes to align them, two mbarriers each.
constexpr size_t kMaxDynamicShared = 227 * 1024;
constexpr int STAGES = int((kMaxDynamicShared - 1024) / (STAGE + 2 * 8));
constexpr size_t kSharedBytes = size_t(STAGES) * STAGE + 1024 + 2 * STAGES * 8;
static_assert(STAGES == 4 && kSharedBytes <= kMaxDynamicShared, "the header's stage count");

}  // namespace wgmma_fp8_v18

// map_a: A, (M,K) row-major e4m3 bytes; map_b: B, (N,K) row-major e4m3 bytes
// (K-major both, row pitch a multiple of 16; maps made by wgmma_fp8_v18::launch);
// C: (M,N) row-major fp32. C = A @ B^T. workspace: stream-K's, as v16's.
// Launch: block (384) = producer + 2 consumer warpgroups; grid (blocks), any
// number of blocks (wgmma_v16::persistent_blocks: min(tiles, SMs)), all
// resident at once when there is a workspace; dynamic shared kSharedBytes.
// sm_90a only.
__global__ void __launch_bounds__(wgmma_fp8_v18::THREADS, 1)
    gemm_wgmma_fp8_persistent(int M, int N, int K, const __grid_constant__ CUtensorMap map_a,
                              const __grid_constant__ CUtensorMap map_b, float* __restrict__ C, void* workspace) {
#if WARPNET_HOPPER_PTX
  using namespace wgmma_fp8_v18;
  using namespace warpnet::ptx;
  using wgmma_fp8_v15::stored, wgmma_fp8_v15::LBO, wgmma_fp8_v15::SBO;
  using wgmma_v13::descriptor;
  // Stage s: A tile at base + s*STAGE (TILE_A bytes), B tile right after; then full[STAGES], empty[STAGES].
  unsigned char* raw = warpnet::dynamic_shared<unsigned char>();
  unsigned char* base = raw + (1024 - shared_address(raw) % 1024) % 1024;  // the swizzle repeats every 1024 bytes
  uint64_t* full = reinterpret_cast<uint64_t*>(base + STAGES * STAGE);
  uint64_t* empty = full + STAGES;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const int tiles_m = warpnet::ceil_div(M, BM), tiles_n = warpnet::ceil_div(N, BN), tiles = tiles_m * tiles_n;
  const int k_steps = warpnet::ceil_div(K, BK);
  const warpnet::StreamK plan = warpnet::plan_stream_k(tiles, k_steps, int(gridDim.x), workspace != nullptr);

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(&full[s], 1);                 // the producer's arrive.expect_tx; TMA adds the bytes
      mbarrier_init(&empty[s], CONSUMERS * 128);  // every consumer thread
    }
    fence_mbarrier_init();  // visible to the copy engine
  }
  __syncthreads();

  // As v16: producer and consumers count the block's k-steps alike, across
  // tiles; step `it` uses stage it % STAGES in round it / STAGES.
  if (wg == 0) {  // producer: one thread keeps the ring full
    setmaxnreg_dec<PRODUCER_REGISTERS>();  // the whole warpgroup, before any thread leaves
    if (t == 0) {
      int it = 0;
      warpnet::BlockWork work(plan, int(blockIdx.x), int(gridDim.x));
      for (warpnet::Work w; work.next(w);) {
        const wgmma_v16::Tile at = wgmma_v16::tile_at(w.tile, tiles_m, tiles_n);
        for (int step = w.k_begin; step < w.k_end; ++step, ++it) {
          const int s = it % STAGES, k0 = step * BK;
          if (it >= STAGES) mbarrier_wait(&empty[s], (it / STAGES - 1) & 1);  // round r-1 released it
          unsigned char* a = base + s * STAGE;
          mbarrier_arrive_expect_tx(&full[s], STAGE);  // whole boxes count, zero-filled parts included
          tma_load_2d(a, &map_a, k0, at.row0, &full[s]);           // map {K, M}: box 128 k x 128 m
          tma_load_2d(a + TILE_A, &map_b, k0, at.col0, &full[s]);  // map {K, N}: box 128 k x 256 n
        }
      }
    }
  } else {  // consumer wg: rows m0..m0+63 of each tile
    setmaxnreg_inc<CONSUMER_REGISTERS>();
    const int m0 = (wg - 1) * WG_M;
    float acc[ACCUMULATORS];
    int it = 0;
    warpnet::BlockWork work(plan, int(blockIdx.x), int(gridDim.x));
    for (warpnet::Work w; work.next(w);) {
      const wgmma_v16::Tile at = wgmma_v16::tile_at(w.tile, tiles_m, tiles_n);
#pragma unroll
      for (int i = 0; i < ACCUMULATORS; ++i) acc[i] = 0.0f;
      const int steps = w.k_end - w.k_begin;  // counted from 0: see v16
      for (int step = 0; step < steps; ++step, ++it) {
        const int s = it % STAGES;
        mbarrier_wait(&full[s], (it / STAGES) & 1);  // TMA's bytes of this round have landed
        const uint32_t a = shared_address(base + s * STAGE), b = a + TILE_A;
        wgmma_fence();  // the accumulators' earlier register writes (the zeros too) come first
#pragma unroll
        for (int kk = 0; kk < BK; kk += WGMMA_K)
          wgmma_m64n256k32_e4m3(acc, descriptor(a + stored(m0, kk), LBO, SBO), descriptor(b + stored(0, kk), LBO, SBO));
        wgmma_commit();
        // Keep this step's group in flight; the previous one is done, so its stage is free.
        wgmma_wait<1>();
        if (step > 0) mbarrier_arrive(&empty[(it - 1) % STAGES]);
      }
      // The piece's last group: retired before its stage goes back and the
      // registers are read, while the producer fills the next piece's stages.
      wgmma_wait<0>();
      if (steps > 0) mbarrier_arrive(&empty[(it - 1) % STAGES]);
      // Stream-K's shared tiles, as v16.
      if (!warpnet::stream_k_piece_done<ACCUMULATORS, wgmma_v16::kConsumerThreads>(acc, workspace, plan, w,
                                                                                   int(blockIdx.x),
                                                                                   int(threadIdx.x) - 128))
        continue;
      wgmma_v13::store_accumulators(acc, C, M, N, at.row0 + m0, at.col0, t);
    }
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // compiled for a GPU without wgmma/TMA: never a silent wrong answer
#endif
}

namespace wgmma_fp8_v18 {

// Makes both maps and launches `blocks` blocks; false (nothing launched) when
// the driver refuses a map. a: (M, pitch) K-major, b: (N, pitch) K-major,
// pitch a multiple of 16 >= K (v15's launch, with B's 256-row box).
inline bool launch(int blocks, int M, int N, int K, int pitch, const uint8_t* a, const uint8_t* b, float* C,
                   void* workspace) {
  CUtensorMap map_a, map_b;
  if (!wgmma_fp8_v15::make_map(&map_a, a, M, pitch, BM) || !wgmma_fp8_v15::make_map(&map_b, b, N, pitch, BN))
    return false;
  warpnet::launch_kernel_opted_in(gemm_wgmma_fp8_persistent, dim3(blocks), dim3(THREADS), kSharedBytes, M, N, K,
                                  map_a, map_b, C, workspace);
  return true;
}

}  // namespace wgmma_fp8_v18
