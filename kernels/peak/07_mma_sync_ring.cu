// Peak v7 — peak v5's warps, ldmatrix and mma.sync, reading a ring of four
// stages with one barrier every 32 k: matmul v17's main loop without its
// copies.
//
// Idea: peak v5 (635 TFLOP/s on an H200, 2026-12-04) and matmul v17 (212)
//   run the same inner loop; v17 adds its memory pipeline around it. This
//   version adds the first half of that pipeline and nothing else: the tiles
//   sit in v17's ring of four 32-deep stages (v17's NN layout and pitches, in
//   dynamic shared memory), filled once before the loop, and the loop walks
//   the ring with v17's one __syncthreads() per k-step. Between v5 and v7
//   lies what the barrier and the moving stage addresses cost; between v7
//   and v8 (the ring refilled by cp.async, as v17 does), what the copies and
//   their waits cost; between v8 and v17, what DRAM, L2 and the edges cost.
// Changed from v5: fragments read from stage (k-step % 4) of a ring, the
//   two k16 slices of a stage between one barrier and the next.
// Measured: not yet measured on a GPU.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace peak/07 --size 2,3
#include "kernels/common/mma_store.hpp"
#include "kernels/peak/mma_sync_tile.hpp"

namespace peak_ring {

using peak_mma_sync::T;
using peak_tile::TK, peak_tile::TM, peak_tile::TN;
constexpr int WN = 64;                   // v17's warp tile: 64x64
constexpr int THREADS = peak_mma_sync::kThreads<WN>;
constexpr int BK = 32, STAGES = 4;       // v17's k-step and ring depth
constexpr int AP = BK + 8, BP = TN + 8;  // v17's pitches (A k-contiguous, B n-contiguous), 16 bytes padded
constexpr int A_ELEMS = TM * AP, B_ELEMS = BK * BP;
constexpr size_t kSharedBytes = size_t(STAGES) * (A_ELEMS + B_ELEMS) * sizeof(T);  // 106 KiB
static_assert(BK == 2 * TK, "a k-step holds the 16-deep tile twice");

// One k-step's tiles into stage (a, b) as v17 copies a k-step, in 16-byte
// cp.async chunks (512 of A, 1024 of B: 6 a thread) laid over the threads as
// v12's stage_tile lays them, committed as one group. A k-step is 32 deep
// and the operands 16, so a stage holds them twice: a[m][k] = A[m][k % 16],
// b[k][n] = B[k % 16][n].
__device__ __forceinline__ void copy_stage(T* a, T* b, const T* __restrict__ A, const T* __restrict__ B) {
  constexpr int A_CHUNKS = BK / 8, B_CHUNKS = TN / 8;  // 16-byte chunks per row
  for (int i = threadIdx.x; i < TM * A_CHUNKS; i += THREADS) {
    // A's rows are 4 chunks: a quarter warp takes one chunk down 8 rows (v12's bank spread).
    const int m = i % 8 + 8 * (i / (8 * A_CHUNKS)), c = (i / 8) % A_CHUNKS;
    warpnet::ptx::cp_async_cg(&a[m * AP + 8 * c], &A[m * TK + 8 * (c % 2)]);
  }
  for (int i = threadIdx.x; i < BK * B_CHUNKS; i += THREADS) {
    const int k = i / B_CHUNKS, c = i % B_CHUNKS;
    warpnet::ptx::cp_async_cg(&b[k * BP + 8 * c], &B[(k % TK) * TN + 8 * c]);
  }
  warpnet::ptx::cp_async_commit();
}

// A warp of 64x64 (wm0, wn0) multiplies the k16 slice `slice` (0 or 1) of
// stage (a, b) into acc: v17's 8 ldmatrix.x4 and 32 mma.sync.
__device__ __forceinline__ void multiply_slice(float (&acc)[peak_mma_sync::MI][WN / 8][4], const T* a, const T* b,
                                               int slice, int wm0, int wn0, int lane) {
  uint32_t af[peak_mma_sync::MI][4], bf[WN / 16][4];
  peak_mma_sync::load_fragments<WN, AP, BP>(a + 16 * slice, b + 16 * slice * BP, wm0, wn0, lane, af, bf);
  peak_mma_sync::mma_warp_tile<WN>(acc, af, bf);
}

}  // namespace peak_ring

// A: (128,16) row-major bf16; B: (16,256) row-major bf16; C: (gridDim.x,128,256)
// fp32, C[b] = repeats * (A @ B), a repeat being one k16 slice. Launch: block
// (256) = 8 warps, grid (blocks); dynamic shared peak_ring::kSharedBytes.
__global__ void __launch_bounds__(peak_ring::THREADS, 1)
    peak_mma_sync_ring(int repeats, const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                       float* __restrict__ C) {
  using namespace peak_ring;
  T* sa = warpnet::dynamic_shared<T>();  // stage s: A at sa + s·A_ELEMS, B at sb + s·B_ELEMS
  T* sb = sa + STAGES * A_ELEMS;
  for (int s = 0; s < STAGES; ++s) copy_stage(sa + s * A_ELEMS, sb + s * B_ELEMS, A, B);
  warpnet::ptx::cp_async_wait<0>();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wm0 = (warp / (TN / WN)) * peak_mma_sync::WM, wn0 = (warp % (TN / WN)) * WN;
  float acc[peak_mma_sync::MI][WN / 8][4] = {};
  const int steps = repeats / 2;  // whole k-steps; an odd repeat is one slice more
  for (int step = 0; step < steps; ++step) {
    // v17's barrier, which there both publishes a stage's copies and frees
    // the one refilled next; here no stage is refilled, so it only costs.
    __syncthreads();
    const int s = step % STAGES;
#pragma unroll
    for (int slice = 0; slice < 2; ++slice)
      multiply_slice(acc, sa + s * A_ELEMS, sb + s * B_ELEMS, slice, wm0, wn0, lane);
  }
  if (repeats % 2 != 0) {
    __syncthreads();
    const int s = steps % STAGES;
    multiply_slice(acc, sa + s * A_ELEMS, sb + s * B_ELEMS, 0, wm0, wn0, lane);
  }
  warpnet::store_mma_fragments(acc, C + size_t(blockIdx.x) * TM * TN, TM, TN, wm0, wn0, lane);
}
