// GEMM v19 — Hopper (sm_90a): mma.sync fed by TMA. v16's producer, mbarrier
// ring, 128x256 tiles and persistent walk, with its two wgmma warpgroups
// replaced by v17's eight mma.sync warps. bf16 inputs, fp32 accumulation.
//
// Idea: the instruction ceilings (kernels/peak/, lesson 04 "Ceilings";
//   bench/results/nvidia-h200-2026-12-04-peak.json) put mma.sync on an H200
//   at 641 TFLOP/s with its fragments in registers and 635 through ldmatrix,
//   as fast with 8 warps as with 16; v12 and v17 reach 38% and 34% of that.
//   Their inner loops are the ceiling's; what they spend beyond it is getting
//   each tile into shared memory. Every thread computes the addresses of its
//   16-byte chunks and issues cp.async for each, waits for its groups, and
//   the whole block meets at __syncthreads every k-step. This version hands
//   all of that to the copy engine, as v13 and v16 do for wgmma:
//   - One thread of a producer warpgroup issues the TMA copies of a 128x64
//     A box and a 256x64 B box per k-step into a 4-stage ring (v16's, carried from tile
//     to tile): full[s] counts the bytes in, empty[s] the 256 consumer
//     threads out. No block-wide barrier in the loop: a warp waits only for
//     the stage it reads, and only until its bytes have landed.
//   - TMA writes the 128-byte swizzle (wgmma_v13::swizzle128): the 16-byte
//     chunk c of 128-byte row r lands at c ^ (r % 8), so the 8 rows of an
//     ldmatrix matrix fall in 8 different bank groups without v12's padding.
//     A lane's ldmatrix address is the swizzled offset of its row's first
//     element (element()).
//   - Eight consumer warps, each v17's 64x64 warp tile (per k16: 4 A and 4 B
//     ldmatrix.x4, 32 mma.sync m16n8k16), 128 fp32 accumulators a thread.
//   - v16's persistent grid: min(tiles, SMs) blocks walk the 128x256 tiles in
//     groups of 8 tile rows, so the producer loads the next tile's stages
//     while the consumers store this one.
// Block: v16's 3 warpgroups = 384 threads and its register split. Warpgroup
//   0 produces; the 8 warps of warpgroups 1 and 2 consume (2 x 4 warp tiles
//   of 64x64). Why not 8 consumer warps and one producer warp: each of the
//   SM's 4 schedulers has a quarter of the register file, 16,384, and one of
//   them would hold 3 of the 9 warps, so ptxas (nvcc 13, -Xptxas -v) capped
//   every thread at 168 registers and spilled (236 bytes stored, 980 loaded
//   per thread). With setmaxnreg the producer gives back all but 40 and the
//   consumers take 232: a scheduler holds one producer warp and two consumer
//   warps, 1,280 + 2 x 7,424 = 16,128 registers.
// Shared memory, layouts, descriptors of the boxes: v16's (wgmma_v16::
//   OperandA/OperandB, kSharedBytes): 4 stages of 48 KiB + 1024 to align +
//   the mbarriers. Row-major A and stored-transposed B are K-major tiles
//   (row = m or n, 64 k in 128 bytes; plain ldmatrix); stored-transposed A
//   and row-major B are MN-major (row = k, 64 m or n per box; ldmatrix
//   .trans), as v12 transposes with .trans from its padded tiles.
// Edges: TMA zero-fills boxes past M, N, K; the epilogue guards every store.
//   Shapes TMA cannot describe (a row pitch off 16 bytes) are launched as
//   v12 by the registration, as for v13 and v16.
// Precision: inputs rounded to bf16, products exact, sums in fp32 (v12's).
// Changed from v17: TMA + mbarriers instead of cp.async + __syncthreads;
//   a producer warpgroup (setmaxnreg 40/232); the 128-byte swizzle instead
//   of padded rows; 64-wide k-steps (was 32); persistent grid.
// Measured: not yet on a GPU (written on 2026-12-04 after the ceilings'
//   run; the next lent H200's `gpu-check.sh` times it beside v12 and v17).
// Build: sm_90a only, as v13 and v16 (src/device/CMakeLists.txt,
//   sm90a_registrations). Run: build/bin/warpnet trace matmul/19 --size
//   144,80,48 on the emulator (a size TMA can describe: 127,129,65 runs
//   v12); build/bin/warpnet bench matmul --size 8192,8192,8192 --kernels
//   matmul/12,matmul/17,matmul/19 on an H100/H200.
#include <cstdint>

#include "kernels/common/hopper.hpp"
#include "kernels/common/mma_store.hpp"
#include "kernels/common/ptx.hpp"
#include "kernels/matmul/16_wgmma_persistent.cu"  // wgmma_v16: OperandA/B, kSharedBytes, tile_at, sm_count

namespace mma_sync_v19 {

using wgmma_v16::BK, wgmma_v16::BM, wgmma_v16::BN, wgmma_v16::STAGES;  // 128x256 tiles, 64-wide k-steps, 4 stages
constexpr int WM = 64, WN = 64;                                         // warp tile of C
constexpr int WARPS_N = BN / WN, CONSUMER_WARPS = (BM / WM) * WARPS_N;  // 2 x 4
constexpr int CONSUMER_THREADS = CONSUMER_WARPS * 32, THREADS = wgmma_v16::THREADS;  // after the producer warpgroup
static_assert(CONSUMER_THREADS == wgmma_v16::kConsumerThreads && WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0,
              "v17's 8 warps in v16's two consumer warpgroups");

// Where TMA put element (mn, k) of operand tile `tile` (1024-byte aligned):
// Op::stored's offset, swizzled. ldmatrix reads 8 consecutive elements along
// the tile's contiguous dimension from there: one 16-byte chunk, which the
// swizzle moves whole.
template <class Op>
__device__ __forceinline__ const unsigned char* element(const unsigned char* tile, int mn, int k) {
  return tile + wgmma_v13::swizzle128(Op::stored(mn, k));
}

}  // namespace mma_sync_v19

// map_a: A, (M,K) row-major bf16, or (K,M) when TA; map_b: B, (K,N) row-major
// bf16, or (N,K) when TB (CUtensorMaps made by mma_sync_v19::launch); C: (M,N)
// row-major fp32. C = op(A) @ op(B).
// Launch: block (384) = producer warpgroup + 8 consumer warps; grid (blocks),
// any number (wgmma_v16::persistent_blocks: min(tiles, SMs)); dynamic shared
// wgmma_v16::kSharedBytes<TA, TB>; built with wgmma_v16::LAUNCH_REGISTERS a
// thread (setmaxnreg's split). sm_90a only.
template <bool TA = false, bool TB = false>
__global__ void __launch_bounds__(mma_sync_v19::THREADS, 1)
    gemm_mma_sync_tma(int M, int N, int K, const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b, float* __restrict__ C) {
#if WARPNET_HOPPER_PTX
  using namespace mma_sync_v19;
  using namespace warpnet::ptx;
  using OpA = wgmma_v16::OperandA<TA>;
  using OpB = wgmma_v16::OperandB<TB>;
  constexpr uint32_t STAGE = wgmma_v16::kStageBytes<TA, TB>;
  constexpr int MI = WM / 16, NI = WN / 8;  // m16 x n8 fragments per warp tile
  const wgmma_v16::Ring ring = wgmma_v16::make_ring(STAGE);
  const int lane = threadIdx.x % 32;
  const int tiles_m = warpnet::ceil_div(M, BM), tiles_n = warpnet::ceil_div(N, BN), tiles = tiles_m * tiles_n;
  const int steps = warpnet::ceil_div(K, BK);
  const warpnet::StreamK plan = warpnet::plan_stream_k(tiles, steps, int(gridDim.x), false);  // whole tiles

  // Producer and consumers count the block's k-steps alike, across tiles
  // (v16's ring, wgmma_v16::produce): step `it` uses stage it % STAGES in round it / STAGES.
  if (threadIdx.x < 128) {  // producer warpgroup: one thread keeps the ring full
    setmaxnreg_dec<wgmma_v16::PRODUCER_REGISTERS>();  // the whole warpgroup, before any thread leaves
    if (threadIdx.x == 0) wgmma_v16::produce<TA, TB>(ring, &map_a, &map_b, plan, tiles_m, tiles_n, BK);
  } else {  // consumer warp: a 64x64 warp tile of each block tile
    setmaxnreg_inc<wgmma_v16::CONSUMER_REGISTERS>();
    const int warp = int(threadIdx.x) / 32 - 4;  // 0..7
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
    // ldmatrix.x4: lane l gives the address of row l%8 of matrix l/8 (v12's
    // fragment order). A fragment m16 x k16 at (m, k): matrices (m 0-7,
    // k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15); a row is 8
    // k of one m (K-major) or, with .trans, 8 m of one k (MN-major).
    const int mat = lane / 8, mrow = lane % 8;
    const int a_mn = TA ? 8 * (mat % 2) : mrow + 8 * (mat % 2), a_k = TA ? mrow + 8 * (mat / 2) : 8 * (mat / 2);
    // B fragments of two n8 tiles (k16 x n16 at (k, n)): matrices (n 0-7,
    // k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15).
    const int b_mn = TB ? mrow + 8 * (mat / 2) : 8 * (mat / 2), b_k = TB ? 8 * (mat % 2) : mrow + 8 * (mat % 2);
    int it = 0;
    // The producer's walk (BlockWork on a plan without stream-K: tiles
    // blockIdx.x, + gridDim.x, ...), written out: walked with BlockWork
    // here, ptxas (nvcc 13) kept the 128 accumulators in a 512-byte stack
    // frame instead of registers.
    for (int tile = int(blockIdx.x); tile < tiles; tile += int(gridDim.x)) {
      const wgmma_v16::Tile at = wgmma_v16::tile_at(tile, tiles_m, tiles_n);
      float acc[MI][NI][4] = {};  // acc[i][j]: C fragment of rows wm0+16i.., columns wn0+8j..
      for (int step = 0; step < steps; ++step, ++it) {
        const int s = it % STAGES;
        mbarrier_wait(&ring.full[s], (it / STAGES) & 1);  // TMA's bytes of this round have landed
        const unsigned char* a = ring.base + s * STAGE;
        const unsigned char* b = a + OpA::BYTES;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
          uint32_t af[MI][4], bf[NI / 2][4];  // af[i]: one A fragment; bf[j]: B fragments of n8 tiles 2j, 2j+1
#pragma unroll
          for (int i = 0; i < MI; ++i) ldmatrix_m8n8<4, TA>(af[i], element<OpA>(a, wm0 + 16 * i + a_mn, kk + a_k));
#pragma unroll
          for (int j = 0; j < NI / 2; ++j)
            ldmatrix_m8n8<4, !TB>(bf[j], element<OpB>(b, wn0 + 16 * j + b_mn, kk + b_k));
#pragma unroll
          for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j) {
              const uint32_t bj[2] = {bf[j / 2][2 * (j % 2)], bf[j / 2][2 * (j % 2) + 1]};
              mma_m16n8k16_bf16_f32(acc[i][j], af[i], bj, acc[i][j]);
            }
        }
        // Every ldmatrix of this stage is done (its registers fed the mmas
        // above; the arrive releases the reads before it): the stage is free.
        mbarrier_arrive(&ring.empty[s]);
      }
      warpnet::store_mma_fragments(acc, C, M, N, at.row0 + wm0, at.col0 + wn0, lane);
    }
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // compiled for a GPU without TMA wrappers (sm_80/89, plain sm_90): never a silent wrong answer
#endif
}

namespace mma_sync_v19 {

// Makes both maps (v16's boxes) and launches `blocks` blocks; false (nothing
// launched) when the driver refuses a map (wgmma_v13::describable() operands
// only: anything else is the caller's to route).
template <bool TA, bool TB>
bool launch(int blocks, int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* B, float* C) {
  using wgmma_v13::make_map;
  using OpA = wgmma_v16::OperandA<TA>;
  using OpB = wgmma_v16::OperandB<TB>;
  CUtensorMap map_a, map_b;
  const bool made_a = TA ? make_map(&map_a, A, M, K, OpA::BOX_OUTER) : make_map(&map_a, A, K, M, OpA::BOX_OUTER);
  const bool made_b = TB ? make_map(&map_b, B, K, N, OpB::BOX_OUTER) : make_map(&map_b, B, N, K, OpB::BOX_OUTER);
  if (!made_a || !made_b) return false;
  constexpr size_t shared = wgmma_v16::kSharedBytes<TA, TB>;
  warpnet::launch_kernel_opted_in(gemm_mma_sync_tma<TA, TB>, dim3(blocks), dim3(THREADS), shared, M, N, K, map_a,
                                  map_b, C);
  return true;
}

}  // namespace mma_sync_v19
