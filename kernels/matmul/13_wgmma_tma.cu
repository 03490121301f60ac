// GEMM v13 — Hopper (sm_90a): TMA copies, an mbarrier pipeline, wgmma from
// 128-byte-swizzled shared memory. bf16 inputs, fp32 accumulation.
//
// Idea: on Hopper the tensor cores outrun anything a warp can feed by hand.
//   Three things take the feeding off the threads:
//   - TMA (cp.async.bulk.tensor): one thread asks the copy engine for a whole
//     2-D box of A or B (described on the host by a CUtensorMap); the engine
//     writes it into shared memory already swizzled, zero-fills whatever lies
//     outside the matrix, and counts the bytes on an mbarrier.
//   - mbarriers: a 4-stage ring. Stage s has a "full" barrier (the producer
//     arms it with the bytes to expect; TMA completes it) and an "empty" one
//     (every consumer thread arrives when its wgmmas are done with the stage;
//     the producer waits on it before refilling). Phases alternate, so waits
//     are on a parity bit: round r of stage s waits for parity r & 1.
//   - wgmma.mma_async: a warpgroup (4 warps, 128 threads) multiplies a 64x16
//     slice of A by a 16x128 slice of B, both read straight from shared memory
//     through 64-bit descriptors (start address, leading/stride byte offsets,
//     swizzle mode); the 64x128 fp32 accumulator lives in registers, 64 per
//     thread. No ldmatrix, no register staging of operands.
//   Block: 3 warpgroups = 384 threads. Warpgroup 0 is the producer (one of
//   its threads issues the copies); warpgroups 1 and 2 each own 64 rows of
//   the block's 128x128 C tile. k-steps of 64 (one 128-byte swizzle row).
// Layouts: wgmma reads bf16 operands either K-major or MN-major (the
//   imm-trans-a/b bits; 16-bit types only), and TMA copies boxes as they are
//   stored, so no transposition happens anywhere: row-major A and stored-
//   transposed B (k contiguous) are K-major tiles, trans bit 0; stored-
//   transposed A and row-major B (m or n contiguous) are MN-major tiles,
//   loaded as 64-wide boxes, trans bit 1. Descriptors (wgmma_v13::Operand):
//     K-major, 128B swizzle: rows of 128 bytes (64 k); SBO = 1024 between
//       groups of 8 rows; LBO unused; the k16 step advances the start by 32 bytes
//       (the hardware applies the XOR swizzle to the final address, so the
//       tile base must be 1024-byte aligned).
//     MN-major, 128B swizzle: rows of 128 bytes hold 64 m (or n) of one k;
//       SBO = 1024 between groups of 8 k; LBO = 8192 between 64-wide boxes; the
//       k16 step advances by 2048 bytes.
// Edges: TMA zero-fills boxes past M, N, K; the epilogue guards every store.
//   TMA needs every row stride a multiple of 16 bytes (the contiguous
//   dimension of A and of B a multiple of 8); other shapes are launched as v12
//   by the registration (13_wgmma_tma.cpp), which says so in its shape text.
// Emulator: the same source runs there (kernels/common/hopper.hpp): TMA
//   copies, mbarrier phases and wgmma are modelled by src/simt/hopper.hpp, so
//   the registry's tests check this kernel against the CPU at every test size
//   and layout, as any other. The model takes its layouts from the PTX ISA,
//   as this kernel does; that both read the ISA alike is what an H200 checked
//   (2026-11-30: tests/gpu passed at every test size and layout).
//   tests/simt/test_wgmma_layout.cpp checks the pieces one by one: the
//   swizzle, the descriptor bit fields, that every (row, k) a wgmma reads
//   through the kernel's descriptors is the element TMA put there, and the
//   accumulator-to-(row, col) map of the epilogue.
// Changed from v12: TMA instead of cp.async; an mbarrier ring of 4 stages
//   instead of 2 __syncthreads()-separated buffers; a producer warpgroup;
//   wgmma m64n128k16 from descriptors instead of ldmatrix + mma.sync m16n8k16;
//   swizzled instead of padded shared tiles.
// Not yet: a persistent grid, 2-CTA clusters with TMA multicast, setmaxnreg
//   for the consumers, a 128x256 tile, a TMA store epilogue — the usual steps
//   from here toward cuBLAS.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   0.231 ms = 596 TFLOP/s at 4096^3, 78.3% of cuBLAS bf16 in the same run; 593 TFLOP/s at 8192^3, 74.8%.
// Build: sm_90a only (nvcc -gencode=arch=compute_90a,code=sm_90a): the CUDA
//   copy compiles this registration for that target alone (src/device/
//   CMakeLists.txt), so on any other GPU the launch fails with
//   cudaErrorNoKernelImageForDevice. Run: warpnet bench on an H100/H200.
#include <cstdint>

#include "kernels/common/float4_rows.hpp"
#include "kernels/common/hopper.hpp"

namespace wgmma_v13 {

constexpr int BM = 128, BN = 128, BK = 64, STAGES = 4;
constexpr int CONSUMERS = 2, THREADS = (CONSUMERS + 1) * 128;  // warpgroup 0 produces
constexpr int WG_M = 64, WG_N = BN, WGMMA_K = 16;              // one wgmma: m64 n128 k16
static_assert(BM == CONSUMERS * WG_M && BK * 2 == 128, "a consumer per 64 rows; a k-step is one 128-byte row");

// The 128-byte swizzle (CU_TENSOR_MAP_SWIZZLE_128B, wgmma layout type 1) on a
// byte offset from a 1024-byte-aligned base: the 16-byte chunk c of 128-byte
// row r moves to chunk c ^ (r % 8). Eight rows read at one chunk index land
// in eight different 16-byte bank groups.
__host__ __device__ constexpr uint32_t swizzle128(uint32_t offset) { return offset ^ (((offset >> 7) & 7u) << 4); }

// A wgmma shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor
// Format"): bits 0-13 start address >> 4, 16-29 leading byte offset >> 4,
// 32-45 stride byte offset >> 4, 49-51 base offset (0: the swizzle pattern
// starts at a 1024-byte boundary), 62-63 swizzle mode (1 = 128 bytes).
__host__ __device__ constexpr uint64_t descriptor(uint32_t shared_address, uint32_t lbo, uint32_t sbo) {
  return uint64_t((shared_address & 0x3FFFFu) >> 4) | uint64_t((lbo & 0x3FFFFu) >> 4) << 16 |
         uint64_t((sbo & 0x3FFFFu) >> 4) << 32 | uint64_t(1) << 62;
}

// One operand's tile in a stage: ROWS = its m (or n) extent, BK its k extent.
// MN_MAJOR: m/n is the contiguous dimension (stored-transposed A, row-major B).
template <bool MN_MAJOR, int ROWS>
struct Operand {
  static_assert(ROWS % 64 == 0, "whole 64-wide boxes and 8-row groups");
  // TMA boxes, innermost dimension first: K-major {64 k, ROWS}; MN-major {64 m/n, BK k}, ROWS/64 of them.
  static constexpr int BOX_INNER = 64, BOX_OUTER = MN_MAJOR ? BK : ROWS, BOXES = MN_MAJOR ? ROWS / 64 : 1;
  static constexpr uint32_t BOX_BYTES = BOX_INNER * BOX_OUTER * 2, BYTES = BOX_BYTES * BOXES;
  static constexpr uint32_t SBO = 1024;                   // between groups of 8 rows of 128 bytes
  static constexpr uint32_t LBO = MN_MAJOR ? BOX_BYTES : 16;  // MN-major: between 64-wide boxes; K-major: unused
  // Byte offset (before swizzling) where TMA puts element (mn, k) of the tile.
  static constexpr uint32_t stored(int mn, int k) {
    return MN_MAJOR ? (mn / 64) * BOX_BYTES + k * 128 + (mn % 64) * 2 : mn * 128 + k * 2;
  }
  // The descriptor start for the wgmma reading rows mn0.. and k0..k0+15 of the tile.
  static constexpr uint32_t start(int mn0, int k0) { return stored(mn0, k0); }
  // Byte offset (before swizzling) at which wgmma reads element (mn, k) of its
  // operand (mn < 64 or 128, k < 16) from a descriptor starting at `s`: the
  // canonical 128B-swizzle layouts (PTX ISA "Shared Memory Matrix Layout"; as
  // CUTLASS writes them, K-major ((8,m),(8,2)):((64,SBO),(1,8)) and MN-major
  // ((8,8,m),(8,k)):((1,8,LBO),(64,SBO)) in bf16 elements).
  static constexpr uint32_t read(uint32_t s, int mn, int k) {
    return MN_MAJOR ? s + (mn / 64) * LBO + (k / 8) * SBO + (k % 8) * 128 + (mn % 64) * 2
                    : s + (mn / 8) * SBO + (mn % 8) * 128 + k * 2;
  }
};
template <bool TA>
using OperandA = Operand<TA, BM>;  // A stored (K,M) when TA: m contiguous
template <bool TB>
using OperandB = Operand<!TB, BN>;  // B stored (K,N) unless TB: n contiguous

template <bool TA, bool TB>
constexpr uint32_t kStageBytes = OperandA<TA>::BYTES + OperandB<TB>::BYTES;
// Dynamic shared memory: the stages, 1024 bytes to align them, the 2 x STAGES mbarriers.
template <bool TA, bool TB>
constexpr size_t kSharedBytes = size_t(STAGES) * kStageBytes<TA, TB> + 1024 + 2 * STAGES * 8;

// Accumulator element i (0..63) of thread t (0..127) of a warpgroup, for
// wgmma m64nNk16 with fp32 D: (row, col) of the 64xN tile (PTX ISA, "WGMMA
// .m64nNk16 register fragment layout for accumulator matrix D": warp w holds
// rows 16w..16w+15, each 8-column block laid out as mma.m16n8's C fragment).
__host__ __device__ constexpr int acc_row(int t, int i) { return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i >> 1) & 1); }
__host__ __device__ constexpr int acc_col(int t, int i) { return 8 * (i >> 2) + 2 * (t % 4) + (i & 1); }

// The epilogue of every wgmma version (13, 15, 16): thread t's COUNT
// accumulators of an m64nN tile (N = 2 * COUNT) whose corner is C's (row0,
// col0), stored straight from registers, pairs of adjacent columns (one
// 8-byte store where C's rows keep them aligned), guarded at M and N.
template <int COUNT>
__device__ __forceinline__ void store_accumulators(const float (&acc)[COUNT], float* C, int M, int N, int row0,
                                                   int col0, int t) {
  const bool pairs = warpnet::float2_rows(C, N);
#pragma unroll
  for (int i = 0; i < COUNT; i += 2) {
    const int r = row0 + acc_row(t, i), c = col0 + acc_col(t, i);
    if (r >= M) continue;
    float* out = C + size_t(r) * N + c;
    if (pairs && c + 1 < N) {
      warpnet::store_float2(out, acc[i], acc[i + 1]);
    } else {
      if (c < N) out[0] = acc[i];
      if (c + 1 < N) out[1] = acc[i + 1];
    }
  }
}

}  // namespace wgmma_v13

// map_a: A, (M,K) row-major bf16, or (K,M) when TA; map_b: B, (K,N) row-major
// bf16, or (N,K) when TB (CUtensorMaps made by wgmma_v13::make_maps);
// C: (M,N) row-major fp32. C = op(A) @ op(B).
// Launch: block (384) = producer + 2 consumer warpgroups; grid (ceil(N/128),
// ceil(M/128)); dynamic shared kSharedBytes<TA, TB>. sm_90a only.
template <bool TA = false, bool TB = false>
__global__ void __launch_bounds__(wgmma_v13::THREADS, 1)
    gemm_wgmma_tma(int M, int N, int K, const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b, float* __restrict__ C) {
#if WARPNET_HOPPER_PTX
  using namespace wgmma_v13;
  using namespace warpnet::ptx;
  using OpA = OperandA<TA>;
  using OpB = OperandB<TB>;
  constexpr uint32_t STAGE = kStageBytes<TA, TB>;
  // Stage s: A tile at base + s*STAGE (OpA::BYTES), B tile right after; then full[STAGES], empty[STAGES].
  unsigned char* raw = warpnet::dynamic_shared<unsigned char>();
  unsigned char* base = raw + (1024 - shared_address(raw) % 1024) % 1024;  // the swizzle repeats every 1024 bytes
  uint64_t* full = reinterpret_cast<uint64_t*>(base + STAGES * STAGE);
  uint64_t* empty = full + STAGES;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const int k_steps = warpnet::ceil_div(K, BK);

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(&full[s], 1);                // the producer's arrive.expect_tx; TMA adds the bytes
      mbarrier_init(&empty[s], CONSUMERS * 128);  // every consumer thread
    }
    fence_mbarrier_init();  // visible to the copy engine
  }
  __syncthreads();

  if (wg == 0) {  // producer: one thread keeps the ring full
    if (t == 0) {
      for (int step = 0; step < k_steps; ++step) {
        const int s = step % STAGES, k0 = step * BK;
        if (step >= STAGES) mbarrier_wait(&empty[s], (step / STAGES - 1) & 1);  // round r-1 released it
        unsigned char* a = base + s * STAGE;
        unsigned char* b = a + OpA::BYTES;
        mbarrier_arrive_expect_tx(&full[s], STAGE);  // whole boxes count, zero-filled parts included
        for (int box = 0; box < OpA::BOXES; ++box)
          if constexpr (TA) tma_load_2d(a + box * OpA::BOX_BYTES, &map_a, row0 + 64 * box, k0, &full[s]);  // map {M, K}
          else tma_load_2d(a, &map_a, k0, row0, &full[s]);                                      // map {K, M}
        for (int box = 0; box < OpB::BOXES; ++box)
          if constexpr (TB) tma_load_2d(b, &map_b, k0, col0, &full[s]);                                    // map {K, N}
          else tma_load_2d(b + box * OpB::BOX_BYTES, &map_b, col0 + 64 * box, k0, &full[s]);     // map {N, K}
      }
    }
  } else {  // consumer wg: rows m0..m0+63 of the block tile
    const int m0 = (wg - 1) * WG_M;
    float acc[64] = {};
    for (int step = 0; step < k_steps; ++step) {
      const int s = step % STAGES;
      mbarrier_wait(&full[s], (step / STAGES) & 1);  // TMA's bytes of round step/STAGES have landed
      const uint32_t a = shared_address(base + s * STAGE), b = a + OpA::BYTES;
      wgmma_fence();  // the accumulators' earlier register writes are ordered before the wgmmas
#pragma unroll
      for (int kk = 0; kk < BK; kk += WGMMA_K)
        wgmma_m64n128k16_bf16<TA ? 1 : 0, TB ? 0 : 1>(acc, descriptor(a + OpA::start(m0, kk), OpA::LBO, OpA::SBO),
                                                       descriptor(b + OpB::start(0, kk), OpB::LBO, OpB::SBO));
      wgmma_commit();
      // Keep this step's group in flight; the previous one is done, so its stage is free.
      wgmma_wait<1>();
      if (step > 0) mbarrier_arrive(&empty[(step - 1) % STAGES]);
    }
    wgmma_wait<0>();
    store_accumulators(acc, C, M, N, row0 + m0, col0, t);
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // compiled for a GPU without wgmma/TMA (sm_80/89/90, plain sm_90): never a silent wrong answer
#endif
}

namespace wgmma_v13 {

// cuTensorMapEncodeTiled from the driver, found through the runtime: the
// program needs no -lcuda. Null when the driver lacks it.
inline PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static const auto fn = warpnet::driver_entry_point<PFN_cuTensorMapEncodeTiled_v12000>("cuTensorMapEncodeTiled");
  return fn;
}

// TMA's layout rules this kernel's maps must meet: the base 16-byte aligned,
// the row pitch (inner * element_bytes) a multiple of 16.
inline bool tma_describable(const void* base, int64_t inner, int element_bytes = 2) {
  return reinterpret_cast<uintptr_t>(base) % 16 == 0 && (inner * element_bytes) % 16 == 0;
}

// A row-major (outer, inner) matrix of bf16 (or fp32: matmul v20) as a 2-D
// tensor map: boxes of one 128-byte row (64 bf16, 32 fp32) x box_outer,
// 128-byte swizzle, zeros outside.
inline bool make_map(CUtensorMap* map, const void* base, int64_t inner, int64_t outer, int box_outer,
                     CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = encode_tiled();
  const cuuint32_t bytes = type == CU_TENSOR_MAP_DATA_TYPE_FLOAT32 ? 4 : 2;
  const cuuint64_t dims[2] = {cuuint64_t(inner), cuuint64_t(outer)}, strides[1] = {cuuint64_t(inner) * bytes};
  const cuuint32_t box[2] = {128 / bytes, cuuint32_t(box_outer)}, element_strides[2] = {1, 1};
  return encode && encode(map, type, 2, const_cast<void*>(base), dims, strides, box, element_strides,
                          CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// Whether TMA can describe A (M,K) and B (K,N) as stored (see tma_describable).
template <bool TA, bool TB>
bool describable(int M, int N, int K, const void* A, const void* B, int element_bytes = 2) {
  return tma_describable(A, TA ? M : K, element_bytes) && tma_describable(B, TB ? K : N, element_bytes);
}

// Makes both maps and launches; false (nothing launched) when the driver
// refuses a map (describable() operands only: anything else is the caller's to route).
template <bool TA, bool TB>
bool launch(dim3 grid, int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* B, float* C) {
  CUtensorMap map_a, map_b;
  const bool made_a = TA ? make_map(&map_a, A, M, K, OperandA<TA>::BOX_OUTER) : make_map(&map_a, A, K, M, OperandA<TA>::BOX_OUTER);
  const bool made_b = TB ? make_map(&map_b, B, K, N, OperandB<TB>::BOX_OUTER) : make_map(&map_b, B, N, K, OperandB<TB>::BOX_OUTER);
  if (!made_a || !made_b) return false;
  constexpr size_t shared = kSharedBytes<TA, TB>;
  warpnet::launch_kernel_opted_in(gemm_wgmma_tma<TA, TB>, grid, dim3(THREADS), shared, M, N, K, map_a, map_b, C);
  return true;
}

}  // namespace wgmma_v13
