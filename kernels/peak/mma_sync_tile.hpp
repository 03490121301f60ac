// The mma.sync peak versions' shared tile (peak v3-v5): A and B staged in
// shared memory as matmul v12 and v17 stage them, and a warp's fragments
// loaded from there with ldmatrix as v17 loads them. Warp tiles are 64 rows
// by WN columns: 64 (v17's, 8 warps an SM) or 32 (v12's, 16 warps an SM in
// its two resident blocks).
#pragma once
#include "kernels/common/ptx.hpp"
#include "kernels/peak/peak_tile.hpp"

namespace peak_mma_sync {

using T = __nv_bfloat16;
using peak_tile::TK, peak_tile::TM, peak_tile::TN;
constexpr int WM = 64, MI = WM / 16;  // warp tile rows; m16 fragments per warp tile
constexpr int AP = TK + 8, BP = TN + 8;  // row pitches padded 16 bytes: conflict-free ldmatrix (v12)
constexpr int A_ELEMS = TM * AP, B_ELEMS = TK * BP;  // shared tiles: A (128,16) k contiguous, B (16,256) n contiguous

// The block's threads for warp tiles WN wide.
template <int WN>
constexpr int kThreads = (TM / WM) * (TN / WN) * 32;

// The whole of A (128,16) and B (16,256), row-major bf16, into the shared
// tiles sa and sb by the block's THREADS threads; then a barrier.
template <int THREADS>
__device__ __forceinline__ void stage(T* sa, T* sb, const T* __restrict__ A, const T* __restrict__ B) {
  for (int i = threadIdx.x; i < TM * TK; i += THREADS) sa[(i / TK) * AP + i % TK] = A[i];
  for (int i = threadIdx.x; i < TK * TN; i += THREADS) sb[(i / TN) * BP + i % TN] = B[i];
  __syncthreads();
}

// This warp's operands of one k16: af[i] the A fragment of rows wm0+16i..,
// bf[j] the B fragments of columns wn0+16j.. (two n8 tiles), by ldmatrix.x4
// (lane l gives row l%8 of matrix l/8; B's rows are k, so .trans). sa and sb
// point at the k16's first column of A and first row of B, in tiles of row
// pitches A_PITCH and B_PITCH (this file's tile, or peak v7's ring stages).
template <int WN, int A_PITCH = AP, int B_PITCH = BP>
__device__ __forceinline__ void load_fragments(const T* sa, const T* sb, int wm0, int wn0, int lane,
                                               uint32_t (&af)[MI][4], uint32_t (&bf)[WN / 16][4]) {
  const int mat = lane / 8, mrow = lane % 8;
#pragma unroll
  for (int i = 0; i < MI; ++i)
    warpnet::ptx::ldmatrix_m8n8<4, false>(af[i],
                                          &sa[(wm0 + 16 * i + mrow + 8 * (mat % 2)) * A_PITCH + 8 * (mat / 2)]);
#pragma unroll
  for (int j = 0; j < WN / 16; ++j)
    warpnet::ptx::ldmatrix_m8n8<4, true>(bf[j],
                                         &sb[(mrow + 8 * (mat % 2)) * B_PITCH + wn0 + 16 * j + 8 * (mat / 2)]);
}

// acc += the warp tile's 4 x WN/8 mma.sync m16n8k16 on one k16's fragments.
template <int WN>
__device__ __forceinline__ void mma_warp_tile(float (&acc)[MI][WN / 8][4], const uint32_t (&af)[MI][4],
                                              const uint32_t (&bf)[WN / 16][4]) {
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < WN / 8; ++j) {
      const uint32_t bj[2] = {bf[j / 2][2 * (j % 2)], bf[j / 2][2 * (j % 2) + 1]};
      warpnet::ptx::mma_m16n8k16_bf16_f32(acc[i][j], af[i], bj, acc[i][j]);
    }
}

}  // namespace peak_mma_sync
