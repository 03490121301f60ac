// GEMM v15 — Hopper (sm_90a): fp8 e4m3 on wgmma, fed by TMA. v13's pipeline
// with v14's number format.
//
// Idea: Hopper's fp8 rate exists only through wgmma (v14's mma.sync fp8 ran at
//   7-11% of cuBLASLt fp8 on an H200), so this is v13 with one-byte inputs:
//   a producer warpgroup whose one thread issues TMA copies into an mbarrier
//   ring, and two consumer warpgroups that each multiply 64 rows of the
//   block's 128x128 C tile with wgmma.mma_async m64n128k32 .e4m3 straight
//   from 128-byte-swizzled shared memory (fp32 accumulators, 64 per thread).
//   A k-step is one 128-byte swizzle row: 128 k of fp8 (v13's was 64 k of
//   bf16), so a stage is A (128 m x 128 k) + B (128 n x 128 k) = 32 KiB and
//   takes 4 wgmmas k32 per consumer. The ring is as deep as the 227 KiB of
//   opt-in shared memory allows: 7 stages (229,376 bytes, the 1024 bytes that
//   align them and 14 mbarriers: 230,512; the 1,936 left cover the 1 KiB that
//   the sm_90a build shows as static shared, `cuobjdump -res-usage`, as v13's).
// Layouts: 8-bit wgmma operands must be K-major (imm-trans-a/b exist for
//   16-bit types only), and TMA copies boxes as they are stored, so the
//   kernel takes A stored (M,K) and B stored (N,K), both k contiguous:
//   trans_a = 0, trans_b = 1 (C = A·B^T, the "TN" form cuBLASLt's fp8 wants).
//   The registration (15_wgmma_fp8.cpp) sends every other operand (A when
//   trans_a, B when not trans_b — the plain row-major B), and any operand
//   whose row pitch K is not a multiple of 16 bytes (TMA's rule) or whose
//   address is not 16-byte aligned, through pack_k_major
//   (kernels/common/pack_k_major.hpp) first: a K-major copy in a device
//   workspace, its rows padded to K rounded up to 16 with zeros (which add
//   nothing). So every shape and layout runs this kernel; none falls back.
//   The packing is part of v15's time, as it is of cuBLASLt fp8's.
// Descriptors (wgmma_v13::descriptor): K-major, 128-byte swizzle, as v13's
//   K-major Operand with one-byte elements: TMA box {128 k, 128 rows} of
//   UINT8; row r of the tile is 128 bytes at r * 128 (16-byte chunk c stored
//   at chunk c ^ (r % 8)); SBO = 1024 bytes between groups of 8 rows; LBO
//   unused (16); the descriptor start advances 32 bytes per k32 (v13: 32
//   bytes per k16 of bf16) and 8192 bytes for the second consumer's 64 rows;
//   wgmma reads element (mn, k) at start + (mn / 8) * 1024 + (mn % 8) * 128 + k
//   before the swizzle, which the hardware applies to the final address, so
//   every tile starts 1024-byte aligned (the tiles are 16 KiB each).
// Edges: TMA zero-fills boxes past M, N and the maps' K; the epilogue guards
//   every store (v13's wgmma_v13::store_accumulators, and its accumulator map acc_row/acc_col:
//   the m64nN f32 accumulator layout is the same for every input type).
//   pack_k_major's grid has ceil(rows / 32) blocks along y: a packed operand
//   of more than 65535 * 32 rows fails to launch (an error naming v15).
// Precision: inputs are rounded to e4m3 (relative error 2^-4); products are
//   exact. The emulator adds each wgmma's products exactly and rounds the
//   sum to fp32 once (src/simt/wgmma.cpp), so there v15 meets the fp32
//   bound (tests/simt/test_wgmma_fp8.cpp checks it). On an H200, cuBLASLt's
//   fp8 — the same wgmma instruction — summed with about 14 significand bits
//   (src/device/cuda/matmul_cublas.cu; the DeepSeek-V3 report, 3.3.2, found
//   the same on H800s), and here every wgmma adds into the one accumulator,
//   never promoted, so all of K sums in about 14 bits: the registration
//   declares accumulator_bits = 14, whose bound covers that.
//   Not done: promoting the partial sums to a separate fp32 accumulator every
//   few wgmmas (DeepSeek-V3's remedy) would need a second set of 64 floats per
//   thread and a wgmma_wait<0> before each promotion.
// Changed from v13: e4m3 instead of bf16; wgmma m64n128k32 .e4m3 instead of
//   m64n128k16 .bf16; 128-wide k-steps; K-major tiles only (a packing pass for
//   the other layouts instead of MN-major descriptors); 7 stages instead of 4.
// Changed from v14: wgmma fed by TMA and an mbarrier ring instead of
//   mma.sync fed by cp.async and __syncthreads(); operands transposed by a
//   separate pass instead of on their way into shared memory.
// Checked: the registry's test sizes and layouts on the emulator, plain and
//   traced; tests/simt/test_wgmma_fp8.cpp runs K long enough for the ring to
//   come round twice (no registry size does: K = 328 is 3 of 7 stages) and
//   operands off 16-byte alignment. nvcc 13.0 for sm_90a: the SASS has
//   QGMMA.64x128x32.F32.E4M3.E4M3 (Hopper's fp8 wgmma; bf16 is HGMMA), 90
//   registers, no local memory.
// Trace (emulator, this 2-core VM, no GPU, 2026-12-07; `warpnet trace
//   matmul/15 --size 128,128,256,0,1`): matches the CPU reference exactly;
//   TMA's copies are only counted (4 boxes, 65,536 bytes) and wgmma is not
//   traced, so what is seen is the epilogue: 8.00 sectors per store request,
//   21.3 memory instructions per warp.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   0.163 ms = 842 TFLOP/s at 4096^3, 92.1% of cuBLASLt fp8 in the same run; 909 TFLOP/s at 8192^3, 75.4%.
//   Both with a row-major B (trans_b = 0), packed K-major first, inside the timed region.
// Build: sm_90a only, as v13 (src/device/CMakeLists.txt).
// Run: warpnet bench matmul on an H200 (the bench's default row-major B is
//   packed first; `--size 4096,4096,4096,0,1` runs this kernel alone); on the
//   emulator: build/bin/warpnet trace matmul/15 --size 128,128,256,0,1
// Uses wgmma_v13's descriptor, store_accumulators and encode_tiled: the
// registration includes kernels/matmul/13_wgmma_tma.cu before this file.
#include <cstdint>

#include "kernels/common/hopper.hpp"

namespace wgmma_fp8_v15 {

constexpr int BM = 128, BN = 128, BK = 128;                    // BK in k = bytes: one 128-byte swizzle row
constexpr int CONSUMERS = 2, THREADS = (CONSUMERS + 1) * 128;  // warpgroup 0 produces
constexpr int WG_M = 64, WGMMA_K = 32;                         // one wgmma: m64 n128 k32
constexpr uint32_t TILE_A = BM * BK, TILE_B = BN * BK, STAGE = TILE_A + TILE_B;  // bytes
constexpr uint32_t SBO = 1024, LBO = 16;  // 8 rows of 128 bytes between row groups; LBO unused when K-major
static_assert(BM == CONSUMERS * WG_M && BN == 128, "a consumer per 64 rows, n128 wgmmas");
static_assert(TILE_A % 1024 == 0 && STAGE % 1024 == 0, "every tile on a 1024-byte swizzle boundary");

// Dynamic shared memory: as many stages as the opt-in limit holds, 1024
// bytes to align them, two mbarriers per stage.
constexpr size_t kMaxDynamicShared = 227 * 1024;  // sm_90 opt-in per block
constexpr int STAGES = int((kMaxDynamicShared - 1024) / (STAGE + 2 * 8));
constexpr size_t kSharedBytes = size_t(STAGES) * STAGE + 1024 + 2 * STAGES * 8;
static_assert(STAGES == 7 && kSharedBytes <= kMaxDynamicShared, "the header's stage count");

// Byte offset (before swizzling) where TMA puts element (mn, k) of a tile: the descriptors' start.
constexpr uint32_t stored(int mn, int k) { return uint32_t(mn) * BK + uint32_t(k); }

}  // namespace wgmma_fp8_v15

// map_a: A, (M,K) row-major e4m3 bytes; map_b: B, (N,K) row-major e4m3 bytes
// (K-major both, row pitch a multiple of 16; maps made by wgmma_fp8_v15::make_map);
// C: (M,N) row-major fp32. C = A @ B^T.
// Launch: block (384) = producer + 2 consumer warpgroups; grid (ceil(N/128),
// ceil(M/128)); dynamic shared kSharedBytes. sm_90a only.
__global__ void __launch_bounds__(wgmma_fp8_v15::THREADS, 1)
    gemm_wgmma_fp8(int M, int N, int K, const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b, float* __restrict__ C) {
#if WARPNET_HOPPER_PTX
  using namespace wgmma_fp8_v15;
  using namespace warpnet::ptx;
  using wgmma_v13::descriptor;
  // Stage s: A tile at base + s*STAGE (TILE_A bytes), B tile right after; then full[STAGES], empty[STAGES].
  unsigned char* raw = warpnet::dynamic_shared<unsigned char>();
  unsigned char* base = raw + (1024 - shared_address(raw) % 1024) % 1024;  // the swizzle repeats every 1024 bytes
  uint64_t* full = reinterpret_cast<uint64_t*>(base + STAGES * STAGE);
  uint64_t* empty = full + STAGES;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const int k_steps = warpnet::ceil_div(K, BK);

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(&full[s], 1);                 // the producer's arrive.expect_tx; TMA adds the bytes
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
        mbarrier_arrive_expect_tx(&full[s], STAGE);  // whole boxes count, zero-filled parts included
        tma_load_2d(a, &map_a, k0, row0, &full[s]);           // map {K, M}: box 128 k x 128 m
        tma_load_2d(a + TILE_A, &map_b, k0, col0, &full[s]);  // map {K, N}: box 128 k x 128 n
      }
    }
  } else {  // consumer wg: rows m0..m0+63 of the block tile
    const int m0 = (wg - 1) * WG_M;
    float acc[64] = {};
    for (int step = 0; step < k_steps; ++step) {
      const int s = step % STAGES;
      mbarrier_wait(&full[s], (step / STAGES) & 1);  // TMA's bytes of round step/STAGES have landed
      const uint32_t a = shared_address(base + s * STAGE), b = a + TILE_A;
      wgmma_fence();  // the accumulators' earlier register writes are ordered before the wgmmas
#pragma unroll
      for (int kk = 0; kk < BK; kk += WGMMA_K)
        wgmma_m64n128k32_e4m3(acc, descriptor(a + stored(m0, kk), LBO, SBO), descriptor(b + stored(0, kk), LBO, SBO));
      wgmma_commit();
      // Keep this step's group in flight; the previous one is done, so its stage is free.
      wgmma_wait<1>();
      if (step > 0) mbarrier_arrive(&empty[(step - 1) % STAGES]);
    }
    wgmma_wait<0>();
    wgmma_v13::store_accumulators(acc, C, M, N, row0 + m0, col0, t);
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // compiled for a GPU without wgmma/TMA: never a silent wrong answer
#endif
}

namespace wgmma_fp8_v15 {

// Whether TMA can read a K-major (rows, K) byte matrix where it is stored:
// the base 16-byte aligned and the row pitch (K bytes) a multiple of 16.
inline bool tma_describable(const void* base, int K) {
  return reinterpret_cast<uintptr_t>(base) % 16 == 0 && K % 16 == 0;
}

// A row-major (rows, pitch) K-major byte matrix as a 2-D tensor map: boxes of
// 128 k x box_rows rows (at most 256, TMA's limit), 128-byte swizzle, zeros outside.
inline bool make_map(CUtensorMap* map, const void* base, int rows, int pitch, unsigned box_rows = 128) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = wgmma_v13::encode_tiled();
  const cuuint64_t dims[2] = {cuuint64_t(pitch), cuuint64_t(rows)}, strides[1] = {cuuint64_t(pitch)};
  const cuuint32_t box[2] = {BK, box_rows}, element_strides[2] = {1, 1};
  return encode && encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(base), dims, strides, box,
                          element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// Makes both maps and launches; false (nothing launched) when the driver
// refuses a map. a: (M, pitch) K-major, b: (N, pitch) K-major, pitch a
// multiple of 16 >= K; the columns K..pitch-1, if any, are read as they are
// (the packed copies hold zeros there).
inline bool launch(dim3 grid, int M, int N, int K, int pitch, const uint8_t* a, const uint8_t* b, float* C) {
  CUtensorMap map_a, map_b;
  if (!make_map(&map_a, a, M, pitch) || !make_map(&map_b, b, N, pitch)) return false;
  warpnet::launch_kernel_opted_in(gemm_wgmma_fp8, grid, dim3(THREADS), kSharedBytes, M, N, K, map_a, map_b, C);
  return true;
}

}  // namespace wgmma_fp8_v15
