// Peak v6 — Hopper's wgmma m64n256k16 (bf16, fp32 accumulation) from shared
// memory (sm_90a): the tensor cores' ceiling for the instruction matmul v16
// is built on.
//
// Idea: two warpgroups, each owning 64 rows of the block's 128x256 tile (one
//   m64n256 accumulator = 128 fp32 a thread, as in v16), issue one wgmma per
//   repeat, chained on their accumulators, and wait for none but the one
//   before: nothing but the tensor cores reading the same two shared tiles.
//   wgmma always reads B (and here A) from shared memory, so this is also
//   the most a GEMM's operands in shared memory can feed. Against cuBLAS's
//   bf16 it says how much room a hand-written Hopper GEMM has at all; against
//   peak v3, what wgmma gives that mma.sync cannot.
// Layout: both tiles K-major in the 128-byte swizzle matmul v13 uses (its
//   swizzle128 and descriptor), rows of 128 bytes of which the first 32 (k
//   0..15) are written and read: A's 128 rows (16 KiB), B's 256 columns as
//   rows (32 KiB), staged by plain stores, so a proxy fence and a barrier come
//   before the first wgmma reads them.
// Changed: first version.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-peak.json, `warpnet bench peak`):
//   5.09 ms = 891.8 TFLOP/s at 1056 blocks x 4096 repeats, 90.1% of the datasheet's dense bf16 peak.
// Build: sm_90a only (src/device/CMakeLists.txt); runs on the emulator, which
//   models wgmma. Run: build/bin/warpnet trace peak/06 --size 2,3
#include "kernels/common/hopper.hpp"
#include "kernels/matmul/13_wgmma_tma.cu"  // wgmma_v13::swizzle128, descriptor, store_accumulators
#include "kernels/peak/peak_tile.hpp"

namespace peak_wgmma_tile {
constexpr int THREADS = 256;  // 2 warpgroups
constexpr uint32_t ROW = 128, SBO = 1024;  // bytes per swizzled row; between groups of 8 rows
constexpr uint32_t A_BYTES = peak_tile::TM * ROW, B_BYTES = peak_tile::TN * ROW;
constexpr size_t kSharedBytes = A_BYTES + B_BYTES + 1024;  // + 1024 to align the tiles for the swizzle
}  // namespace peak_wgmma_tile

// A: (128,16) row-major bf16; B: (16,256) row-major bf16; C: (gridDim.x,128,256)
// fp32, C[b] = repeats * (A @ B). Launch: block (256) = 2 warpgroups, grid
// (blocks); dynamic shared peak_wgmma_tile::kSharedBytes (49 KiB: opted in). sm_90a only.
__global__ void __launch_bounds__(peak_wgmma_tile::THREADS, 1)
    peak_wgmma(int repeats, const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
               float* __restrict__ C) {
#if WARPNET_HOPPER_PTX
  using namespace peak_tile;
  using namespace peak_wgmma_tile;
  using namespace warpnet::ptx;
  unsigned char* raw = warpnet::dynamic_shared<unsigned char>();
  unsigned char* a = raw + (1024 - shared_address(raw) % 1024) % 1024;  // the swizzle repeats every 1024 bytes
  unsigned char* b = a + A_BYTES;
  // Element (row, k) of a K-major tile: row `row` of 128 bytes, k contiguous, swizzled.
  for (int i = threadIdx.x; i < TM * TK; i += THREADS)  // A[m][k], i = 16m + k
    *reinterpret_cast<__nv_bfloat16*>(a + wgmma_v13::swizzle128((i / TK) * ROW + (i % TK) * 2)) = A[i];
  for (int i = threadIdx.x; i < TK * TN; i += THREADS)  // B[k][n], i = 256k + n: row n of Bᵀ
    *reinterpret_cast<__nv_bfloat16*>(b + wgmma_v13::swizzle128((i % TN) * ROW + (i / TN) * 2)) = B[i];
  fence_proxy_async_shared();  // plain stores, read next by wgmma (the async proxy)
  __syncthreads();

  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const uint64_t desc_a = wgmma_v13::descriptor(shared_address(a) + 64 * wg * ROW, 16, SBO);  // rows 64wg..
  const uint64_t desc_b = wgmma_v13::descriptor(shared_address(b), 16, SBO);
  float acc[128] = {};
  // One loop, fenced inside: a second loop for a remainder, or a wgmma under
  // a condition, makes paths that skip wgmmas, and ptxas then fills the
  // accumulators with moves where they merge, serializing every wgmma
  // (warning C7515) or fencing each one itself (C7519).
  for (int r = 0; r < repeats; ++r) {
    wgmma_fence();  // the accumulators' register writes (the zeros) come before the wgmma that reads them
    wgmma_m64n256k16_bf16<0, 0>(acc, desc_a, desc_b);
    wgmma_commit();
    wgmma_wait<1>();  // one wgmma in flight behind the one just issued
  }
  wgmma_wait<0>();
  wgmma_v13::store_accumulators(acc, C + size_t(blockIdx.x) * TM * TN, TM, TN, 64 * wg, 0, t);
#elif defined(__CUDA_ARCH__)
  __trap();  // compiled for a GPU without wgmma: never a silent wrong answer
#endif
}
