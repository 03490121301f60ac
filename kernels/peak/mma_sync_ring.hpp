// The ring of stages peak v7 and v8 multiply from: matmul v17's k-step, ring
// depth, NN layout and pitches, in dynamic shared memory; the copy of one
// k-step into a stage, as v17 copies one; and a warp's k16 slice of a
// stage, v17's 8 ldmatrix.x4 and 32 mma.sync (peak v5's, mma_sync_tile.hpp).
#pragma once
#include "kernels/common/ptx.hpp"
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
