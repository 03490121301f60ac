// GEMM v20 — Hopper (sm_90a): FP32 on the CUDA cores, fed by TMA. v19's
// idea for the FFMA rungs: the copy engine fills shared memory, the math
// warps only load from it and multiply. fp32 inputs, fp32 sums.
//
// Idea: the ceilings (kernels/peak/, lesson 04 "Ceilings"; bench/results/
//   nvidia-h200-2026-12-04-peak.json) put v09's inner loop — shared loads
//   into an 8x8 thread tile, then its FFMAs — at 53.6 TFLOP/s on an H200
//   and the 8x16 tile's at 55.4. cuBLAS's SGEMM runs at 95% of the first;
//   v09 at 65%. What v09 adds to that loop is its copies: every thread
//   computes addresses and issues cp.async for its share of each tile, waits
//   for its groups, and the block meets at __syncthreads once a k-step. Here
//   none of that is in the math warps' loop:
//   - v16's producer warpgroup (setmaxnreg 40) issues TMA copies of a 128x32
//     A tile and a 32x256 B tile per k-step into a 4-stage ring of 48 KiB
//     stages; the two consumer warpgroups (setmaxnreg 232) wait on full[s],
//     compute, and arrive on empty[s]. Persistent grid and tile order: v16's.
//   - Each of the 256 consumer threads owns an 8x16 thread tile (peak/02's):
//     128 fp32 accumulators, and per 4 k at most 24 16-byte shared loads
//     for 512 FFMA (peak/02 has 6 per 128).
//   - A k-step is 32 fp32 = one 128-byte row of TMA's 128-byte swizzle (the
//     16-byte chunk c of row r lands at c ^ (r % 8)). Which elements a thread
//     owns is chosen so that each 16-byte load reads one chunk and the 8
//     lanes of a load phase (a 16-byte load is served 8 lanes at a time)
//     read the same chunk or chunks of 8 rows that the swizzle spreads over
//     8 bank groups: no conflicts, no padding.
// Threads: consumer thread t (0..255): ty = t / 16 (two per warp), tx = t % 16.
//   Rows: ty + 16i (i < 8) when A is K-major (row-major A: a thread loads 4 k
//   of one row at once); 4ty + 64(i/4) + i%4 when A is MN-major (stored
//   transposed: 4 rows of one k at once). Columns: 4tx + 64(j/4) + j%4
//   (j < 16) when B is MN-major (row-major B: 4 columns of one k), tx + 16j
//   when B is K-major (stored transposed: 4 k of one column).
// Shared memory: STAGES x (A 16 KiB + B 32 KiB) + 1024 to align + 8 mbarriers
//   = 197,696 bytes, as v16.
// Edges: TMA zero-fills boxes past M, N, K; the epilogue guards every store.
//   TMA needs every row stride a multiple of 16 bytes (A's and B's
//   contiguous dimension a multiple of 4); other shapes are launched as v09
//   by the registration.
// Instructions: the FFMA pipe takes one warp instruction a cycle, the same
//   rate the scheduler issues at, so every other instruction in the loop
//   takes an FFMA's place. In the SASS (nvcc 13.0, sm_90a; cuobjdump -sass,
//   scripts/sass-loops.py) the consumer's loop over 8 k is 1024 FFMA and 48
//   16-byte shared loads in 1091-1103 instructions by layout, 93-94% FFMA
//   (peak/02's loop: 95%; v09's: 1024 of 1800, 57%). Written with the
//   swizzle applied load by load it was 1313 in NN (78%): ThreadLoads below.
// Precision: fp32 products and sums (v09's), the sums in another order.
// Changed from v09: TMA + mbarriers instead of cp.async + __syncthreads; a
//   producer warpgroup; 128x256 tiles and 8x16 thread tiles (v09: 128x128,
//   8x8); the 128-byte swizzle instead of a transposed A tile; persistent grid.
// Measured: not yet on a GPU (written on 2026-12-04 after the ceilings' run).
// Build: sm_90a only (setmaxnreg, TMA wrappers; src/device/CMakeLists.txt).
// Run: on the emulator, build/bin/warpnet trace matmul/20 --size 256,256,128; on an H100 or H200,
//   build/bin/warpnet bench matmul --size 4096,4096,4096 --kernels matmul/9,matmul/20
#include <cstdint>

#include "kernels/common/float4_rows.hpp"
#include "kernels/common/hopper.hpp"
#include "kernels/matmul/16_wgmma_persistent.cu"  // wgmma_v16: tile_at, persistent_blocks, the register split

namespace sgemm_v20 {

using wgmma_v16::BM, wgmma_v16::BN, wgmma_v16::STAGES;  // 128x256 tiles, 4 stages
constexpr int BK = 32;                                   // 32 fp32 = one 128-byte swizzle row
constexpr int THREADS = wgmma_v16::THREADS, CONSUMER_THREADS = wgmma_v16::kConsumerThreads;  // 384, 256
constexpr int TM = 8, TN = 16;  // thread tile
static_assert(CONSUMER_THREADS * TM * TN == BM * BN && CONSUMER_THREADS == 256, "16 x 16 threads of 8 x 16");

// One operand's fp32 tile in a stage, as TMA lays it: ROWS = its m (or n)
// extent. K-major: ROWS rows of 32 k (one box {32 k, ROWS}). MN-major: BK
// rows of k, each 32 m/n wide, in ROWS / 32 boxes {32 m/n, 32 k} of 4 KiB.
template <bool MN_MAJOR, int ROWS>
struct Operand {
  static constexpr bool MN_MAJOR_TILE = MN_MAJOR;
  static constexpr int BOX_INNER = 32, BOX_OUTER = MN_MAJOR ? BK : ROWS, BOXES = MN_MAJOR ? ROWS / 32 : 1;
  static constexpr uint32_t BOX_BYTES = BOX_INNER * BOX_OUTER * 4, BYTES = BOX_BYTES * BOXES;
  // Byte offset (before swizzling) of element (mn, k) of the tile.
  static constexpr uint32_t stored(int mn, int k) {
    return MN_MAJOR ? (mn / 32) * BOX_BYTES + k * 128 + (mn % 32) * 4 : mn * 128 + k * 4;
  }
};
template <bool TA>
using OperandA = Operand<TA, BM>;  // A stored (K,M) when TA: m contiguous
template <bool TB>
using OperandB = Operand<!TB, BN>;  // B stored (K,N) unless TB: n contiguous

template <bool TA, bool TB>
constexpr uint32_t kStageBytes = OperandA<TA>::BYTES + OperandB<TB>::BYTES;
template <bool TA, bool TB>
constexpr size_t kSharedBytes = wgmma_v16::ring_bytes(kStageBytes<TA, TB>);
static_assert(kSharedBytes<false, false> <= 227 * 1024, "4 stages fit the opt-in shared memory");

// The thread tile's rows and columns (header): i < TM, j < TN.
template <bool TA>
__host__ __device__ constexpr int row_of(int ty, int i) {
  return TA ? 4 * ty + 64 * (i / 4) + i % 4 : ty + 16 * i;
}
template <bool TB>
__host__ __device__ constexpr int col_of(int tx, int j) {
  return TB ? tx + 16 * j : 4 * tx + 64 * (j / 4) + j % 4;
}

// Where one thread's 16-byte loads sit in an operand's tile, the swizzle
// taken apart. swizzle128(Op::stored(mn, k)) is right for any element, but
// written that way ptxas rebuilt the whole offset for every load (shift,
// XOR, adds: about 5 integer instructions per 16-byte load, 234 for each
// 1024 FFMA in the SASS of nvcc 13). A thread's loads share more than that:
//   K-major (rows mn = t + 16 idx, chunk k/4 of each): every row has
//     row % 8 = t % 8, so the swizzled chunk (k/4) ^ (t % 8) is one value
//     for all idx at a given k, and 16 rows are 2048 bytes apart.
//   MN-major (columns mn = 4t + 64 idx, 4 at one k): box (4t)/32 + 2 idx,
//     row k, chunk (t % 8) ^ (k % 8): again one XOR per k, the boxes
//     2 x 4096 bytes apart.
// So the part that changes with k is one XOR of a thread constant, and the
// rest is a thread constant plus an immediate offset that the 16-byte load
// carries. offset(t, idx, k) == swizzle128(Op::stored(mn, k)) for every
// thread, load and k of a tile: the static_asserts below.
// SPACING: the threads along the tile's rows, so a thread's K-major rows are
// t + SPACING idx (16 here; conv v16's tiles have 8, 16 or 32 threads along a
// side). Any multiple of 8 keeps row % 8 = t % 8, which is all the K-major
// loads need; the MN-major ones are written for 16.
template <class Op, int SPACING = 16>
struct ThreadLoads {
  static constexpr bool MN_MAJOR = Op::MN_MAJOR_TILE;
  static_assert(SPACING % 8 == 0 && (!MN_MAJOR || SPACING == 16), "rows a multiple of 8 apart; MN-major: 16");
  // t: ty for A, tx for B (0..SPACING-1).
  __host__ __device__ static constexpr uint32_t thread_bytes(int t) {
    return MN_MAJOR ? uint32_t(t / 8) * Op::BOX_BYTES : uint32_t(t) * 128;
  }
  // The swizzle's XOR for a thread at k, in bytes (bits 4-6).
  __host__ __device__ static constexpr uint32_t swizzled_chunk(int t, int k) {
    return uint32_t((MN_MAJOR ? (k & 7) : (k >> 2)) ^ (t & 7)) << 4;
  }
  // The rest: which row group (K-major) or box pair (MN-major), and k's row.
  __host__ __device__ static constexpr uint32_t unswizzled(int idx, int k) {
    return MN_MAJOR ? uint32_t(idx) * 2 * Op::BOX_BYTES + uint32_t(k) * 128 : uint32_t(idx) * SPACING * 128;
  }
  __host__ __device__ static constexpr uint32_t offset(int t, int idx, int k) {
    return thread_bytes(t) + unswizzled(idx, k) + swizzled_chunk(t, k);
  }
};

// Every load of every thread of a tile (LOADS of them, at every KSTEP-th k)
// where ThreadLoads puts it and where the swizzle of TMA's layout has the
// element the consumer means: first(t, idx), its row_of or col_of.
template <class Op, int LOADS, int KSTEP, int SPACING = 16, class First>
constexpr bool thread_loads_match_swizzle(First first) {
  for (int t = 0; t < SPACING; ++t)
    for (int idx = 0; idx < LOADS; ++idx)
      for (int k = 0; k < BK; k += KSTEP)
        if (ThreadLoads<Op, SPACING>::offset(t, idx, k) != wgmma_v13::swizzle128(Op::stored(first(t, idx), k)))
          return false;
  return true;
}
// The consumer's loads (below): K-major 4 k of a row a load, MN-major 4 rows
// of one k; each starts at its first row (A) or column (B).
constexpr auto a_k_major = [](int t, int i) { return row_of<false>(t, i); };
constexpr auto a_mn_major = [](int t, int h) { return row_of<true>(t, 4 * h); };
constexpr auto b_k_major = [](int t, int j) { return col_of<true>(t, j); };
constexpr auto b_mn_major = [](int t, int g) { return col_of<false>(t, 4 * g); };
static_assert(thread_loads_match_swizzle<OperandA<false>, TM, 4>(a_k_major), "row-major A's loads");
static_assert(thread_loads_match_swizzle<OperandA<true>, TM / 4, 1>(a_mn_major), "stored-transposed A's loads");
static_assert(thread_loads_match_swizzle<OperandB<true>, TN, 4>(b_k_major), "stored-transposed B's loads");
static_assert(thread_loads_match_swizzle<OperandB<false>, TN / 4, 1>(b_mn_major), "row-major B's loads");

// Elements (mn, k..k+3) of a K-major tile, or (mn..mn+3, k) of an MN-major
// one: one 16-byte chunk, which the swizzle moves whole. thread_tile: the
// tile plus ThreadLoads<Op, SPACING>::thread_bytes(t).
template <class Op, int SPACING = 16>
__device__ __forceinline__ float4 load4(const unsigned char* thread_tile, int t, int idx, int k) {
  using Loads = ThreadLoads<Op, SPACING>;
  return warpnet::load_float4(
      reinterpret_cast<const float*>(thread_tile + Loads::swizzled_chunk(t, k) + Loads::unswizzled(idx, k)));
}

}  // namespace sgemm_v20

// map_a: A, (M,K) row-major fp32, or (K,M) when TA; map_b: B, (K,N) row-major
// fp32, or (N,K) when TB (CUtensorMaps made by sgemm_v20::launch); C: (M,N)
// row-major fp32. C = op(A) @ op(B).
// Launch: block (384) = producer warpgroup + 2 consumer warpgroups; grid
// (blocks), any number (wgmma_v16::persistent_blocks: min(tiles, SMs));
// dynamic shared kSharedBytes<TA, TB>; built with wgmma_v16::LAUNCH_REGISTERS
// a thread (setmaxnreg's split). sm_90a only.
template <bool TA = false, bool TB = false>
__global__ void __launch_bounds__(sgemm_v20::THREADS, 1)
    sgemm_tma(int M, int N, int K, const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
              float* __restrict__ C) {
#if WARPNET_HOPPER_PTX
  using namespace sgemm_v20;
  using namespace warpnet::ptx;
  using OpA = OperandA<TA>;
  using OpB = OperandB<TB>;
  constexpr uint32_t STAGE = kStageBytes<TA, TB>;
  const wgmma_v16::Ring ring = wgmma_v16::make_ring(STAGE);
  const int tiles_m = warpnet::ceil_div(M, BM), tiles_n = warpnet::ceil_div(N, BN), tiles = tiles_m * tiles_n;
  const int steps = warpnet::ceil_div(K, BK);
  const warpnet::StreamK plan = warpnet::plan_stream_k(tiles, steps, int(gridDim.x), false);  // whole tiles

  // Producer and consumers count the block's k-steps alike, across tiles
  // (v16's ring, wgmma_v16::produce): step `it` uses stage it % STAGES in round it / STAGES.
  if (threadIdx.x < 128) {  // producer warpgroup: one thread keeps the ring full
    setmaxnreg_dec<wgmma_v16::PRODUCER_REGISTERS>();  // the whole warpgroup, before any thread leaves
    if (threadIdx.x == 0) wgmma_v16::produce<TA, TB, OpA, OpB>(ring, &map_a, &map_b, plan, tiles_m, tiles_n, BK);
  } else {  // consumer: an 8x16 thread tile of each block tile
    setmaxnreg_inc<wgmma_v16::CONSUMER_REGISTERS>();
    const int t = int(threadIdx.x) - 128, ty = t / 16, tx = t % 16;
    int it = 0;
    // The producer's walk, written out as in v19 (whose accumulators ptxas
    // put on the stack when the consumers walked with BlockWork).
    for (int tile = int(blockIdx.x); tile < tiles; tile += int(gridDim.x)) {
      const wgmma_v16::Tile at = wgmma_v16::tile_at(tile, tiles_m, tiles_n);
      float acc[TM][TN] = {};
      for (int step = 0; step < steps; ++step, ++it) {
        const int s = it % STAGES;
        mbarrier_wait(&ring.full[s], (it / STAGES) & 1);  // TMA's bytes of this round have landed
        const unsigned char* a_tile = ring.base + s * STAGE + ThreadLoads<OpA>::thread_bytes(ty);
        const unsigned char* b_tile = ring.base + s * STAGE + OpA::BYTES + ThreadLoads<OpB>::thread_bytes(tx);
#pragma unroll 2
        for (int kq = 0; kq < BK; kq += 4) {
          float a[TM][4];  // a[i][c] = A(row i, kq + c)
          if constexpr (TA) {
#pragma unroll
            for (int c = 0; c < 4; ++c)
#pragma unroll
              for (int h = 0; h < TM / 4; ++h) {
                const float4 v = load4<OpA>(a_tile, ty, h, kq + c);
                a[4 * h][c] = v.x, a[4 * h + 1][c] = v.y, a[4 * h + 2][c] = v.z, a[4 * h + 3][c] = v.w;
              }
          } else {
#pragma unroll
            for (int i = 0; i < TM; ++i) {
              const float4 v = load4<OpA>(a_tile, ty, i, kq);
              a[i][0] = v.x, a[i][1] = v.y, a[i][2] = v.z, a[i][3] = v.w;
            }
          }
          if constexpr (TB) {  // K-major B: 4 k of one column a load
#pragma unroll
            for (int j = 0; j < TN; ++j) {
              const float4 v = load4<OpB>(b_tile, tx, j, kq);
              const float b[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
              for (int c = 0; c < 4; ++c)
#pragma unroll
                for (int i = 0; i < TM; ++i) acc[i][j] = fmaf(a[i][c], b[c], acc[i][j]);
            }
          } else {  // MN-major B: 4 columns of one k a load
#pragma unroll
            for (int c = 0; c < 4; ++c) {
              float b[TN];
#pragma unroll
              for (int g = 0; g < TN / 4; ++g) {
                const float4 v = load4<OpB>(b_tile, tx, g, kq + c);
                b[4 * g] = v.x, b[4 * g + 1] = v.y, b[4 * g + 2] = v.z, b[4 * g + 3] = v.w;
              }
#pragma unroll
              for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i][c], b[j], acc[i][j]);
            }
          }
        }
        mbarrier_arrive(&ring.empty[s]);  // this thread's reads of the stage are done (the arrive releases them)
      }
      // Row-major B: a thread's columns come 4 at a time, one 16-byte store
      // each where C's rows keep them aligned; stored-transposed B: one by one.
      const bool vector = warpnet::float4_rows(C, N);
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const int r = at.row0 + row_of<TA>(ty, i);
        if constexpr (TB) {
#pragma unroll
          for (int j = 0; j < TN; ++j) {
            const int c = at.col0 + col_of<TB>(tx, j);
            if (r < M && c < N) C[size_t(r) * N + c] = acc[i][j];
          }
        } else {
#pragma unroll
          for (int g = 0; g < TN / 4; ++g)
            warpnet::store_row4(C, M, N, r, at.col0 + col_of<TB>(tx, 4 * g),
                                make_float4(acc[i][4 * g], acc[i][4 * g + 1], acc[i][4 * g + 2], acc[i][4 * g + 3]),
                                vector);
        }
      }
    }
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // compiled for a GPU without setmaxnreg and the TMA wrappers: never a silent wrong answer
#endif
}

namespace sgemm_v20 {

// Makes both maps and launches `blocks` blocks; false (nothing launched) when
// the driver refuses a map (wgmma_v13::describable(..., 4) operands only:
// anything else is the caller's to route).
template <bool TA, bool TB>
bool launch(int blocks, int M, int N, int K, const float* A, const float* B, float* C) {
  using wgmma_v13::make_map;
  constexpr CUtensorMapDataType fp32 = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  CUtensorMap map_a, map_b;
  const bool made_a = TA ? make_map(&map_a, A, M, K, OperandA<TA>::BOX_OUTER, fp32)
                         : make_map(&map_a, A, K, M, OperandA<TA>::BOX_OUTER, fp32);
  const bool made_b = TB ? make_map(&map_b, B, K, N, OperandB<TB>::BOX_OUTER, fp32)
                         : make_map(&map_b, B, N, K, OperandB<TB>::BOX_OUTER, fp32);
  if (!made_a || !made_b) return false;
  constexpr size_t shared = kSharedBytes<TA, TB>;
  warpnet::launch_kernel_opted_in(sgemm_tma<TA, TB>, dim3(blocks), dim3(THREADS), shared, M, N, K, map_a, map_b, C);
  return true;
}

}  // namespace sgemm_v20
