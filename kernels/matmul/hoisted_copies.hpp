// One operand tile's copies into a stage, k-step after k-step, with each
// thread's part worked out once before the k-loop: what matmul v23 and v24
// (mma_sync_v17::Tiles<..., true>) copy with instead of v12's stage_tile.
//
// Why: stage_tile derives every 16-byte chunk from its index at every k-step
//   (row and column by division, the global address from them, both edge
//   tests, the aligned-or-not branch), in a loop ptxas does not unroll. In
//   v17's SASS (nvcc 13.0, sm_90a) that is 44 instructions a chunk on the
//   aligned path, six chunks a thread a k-step: some 260 instructions beside
//   a warp's 64 mma.sync and 16 ldmatrix.
//   Yet a thread's chunks of one tile differ only by a fixed number of rows
//   (the threads cover RPP rows a pass), and a k-step moves every chunk the
//   same distance. So before the loop each thread keeps: the element index
//   of its first chunk, the index distance between its chunks, its
//   coordinate that k does not move and whether that is inside the matrix;
//   a k-step then costs about 14 instructions a chunk in v23's SASS (the
//   64-bit index, its select, the address, one compare), against 44.
// Map: the same chunks to the same threads as stage_tile (so the same
//   conflict-free shared writes): long rows (>= 8 chunks) a thread's chunks
//   down a column of chunks; short rows (k-contiguous tiles, 4 chunks) a
//   quarter warp down 8 rows of one chunk column.
// Edges: only for rows whose contiguous dimension is a multiple of 8
//   elements (every chunk wholly inside or wholly outside); for other
//   shapes the launch takes the block with stage_tile's copies
//   (mma_sync_v17::rows_whole_chunks, Tiles::StageTileCopies). A chunk
//   outside is zero-filled (src-size 0) from the matrix's first element,
//   as stage_tile does.
#pragma once
#include "kernels/common/ptx.hpp"

namespace mma_sync_copies {

// An R x CC tile (CC contiguous) of a row-major rows x cols matrix of 16-bit
// elements into shared memory of row pitch P, by THREADS threads, one
// cp.async group's worth a k-step. K_ROWS: the tile's rows are k (its origin
// row moves with k); otherwise its columns are (its origin column moves).
template <int R, int CC, int P, int THREADS, bool K_ROWS, class T>
struct TileCopies {
  static constexpr int CHUNK = 8, CHUNKS_PER_ROW = CC / CHUNK;  // 8 elements = 16 bytes
  static constexpr int COPIES = R * CHUNKS_PER_ROW / THREADS;    // chunks a thread
  static constexpr int ROWS_PER_PASS = THREADS / CHUNKS_PER_ROW;  // rows between a thread's chunks
  static_assert(CC % CHUNK == 0 && (R * CHUNKS_PER_ROW) % THREADS == 0 && THREADS % (8 * CHUNKS_PER_ROW) == 0,
                "whole chunks, the same count per thread, whole passes of rows");
  static_assert(COPIES <= 32, "one bit a chunk in inside_fixed");

  size_t first;          // element index of this thread's chunk 0 at k = 0 (read only when inside)
  size_t pass;           // element distance from a chunk to the next: ROWS_PER_PASS rows
  int moving;            // chunk 0's coordinate that k moves: its row (K_ROWS) or column
  int limit;             // that coordinate's end: rows (K_ROWS) or cols
  int k_stride;          // elements a unit of k moves the tile: cols (K_ROWS) or 1
  uint32_t inside_fixed; // bit i: chunk i's other coordinate is inside the matrix
  int shared_first;      // element offset of chunk 0 in the stage's tile

  TileCopies() = default;
  // The tile's origin at k = 0 is (r0, c0).
  __device__ TileCopies(int rows, int cols, int r0, int c0) {
    const int t = int(threadIdx.x);
    const int r = CHUNKS_PER_ROW >= 8 ? t / CHUNKS_PER_ROW : t % 8 + 8 * (t / (8 * CHUNKS_PER_ROW));
    const int c = (CHUNKS_PER_ROW >= 8 ? t % CHUNKS_PER_ROW : (t / 8) % CHUNKS_PER_ROW) * CHUNK;
    first = size_t(r0 + r) * size_t(cols) + size_t(c0 + c);
    pass = size_t(ROWS_PER_PASS) * size_t(cols);
    moving = K_ROWS ? r0 + r : c0 + c;
    limit = K_ROWS ? rows : cols;
    k_stride = K_ROWS ? cols : 1;
    inside_fixed = 0;
#pragma unroll
    for (int i = 0; i < COPIES; ++i)
      if (K_ROWS ? c0 + c < cols : r0 + r + i * ROWS_PER_PASS < rows) inside_fixed |= 1u << i;
    shared_first = r * P + c;
  }

  // Issues this thread's chunks of the tile at k0 (a multiple of the k-step)
  // into `tile`; the caller commits the group.
  __device__ __forceinline__ void copy(T* tile, const T* __restrict__ matrix, int k0) const {
    const size_t at_k = first + size_t(k0) * size_t(k_stride);
#pragma unroll
    for (int i = 0; i < COPIES; ++i) {
      const bool inside = (inside_fixed >> i & 1u) && moving + k0 + (K_ROWS ? i * ROWS_PER_PASS : 0) < limit;
      warpnet::ptx::cp_async_cg(tile + shared_first + i * ROWS_PER_PASS * P, matrix + (inside ? at_k + i * pass : 0),
                                inside ? 16 : 0);
    }
  }
};

}  // namespace mma_sync_copies
