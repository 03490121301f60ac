// GEMM v12 — mma.sync m16n8k16 through PTX: bf16 inputs, fp32 accumulation,
// cp.async double buffering, ldmatrix from padded shared tiles.
//
// Idea: what wmma hides, spelled out and scaled up. A block of 8 warps owns a
//   128x128 tile of C; each warp a 64x32 warp tile = 4x4 mma.sync m16n8k16
//   fragments, 64 fp32 accumulators per thread. Per 32-wide step of K the
//   block copies a 128x32 tile of A and a 32x128 tile of B global -> shared
//   with cp.async (16 bytes per thread per copy, no register round trip) into
//   one of two stages, so the copy of step k+1 overlaps the math of step k.
//   Each warp pulls its operands out of shared memory with ldmatrix.x4 (four
//   8x8 matrices = one 16x16 A fragment, or the B fragments of two n8 tiles)
//   and issues 16 mma.sync per 16 of K: 6 ldmatrix.x4 (4 for A, 2 for B)
//   feed 16 tensor-core instructions (v11's wmma::load_matrix_sync: 12
//   fragment loads for its 8 mma).
// Layouts: shared tiles keep the operand as it is stored (rows copied as
//   16-byte chunks, whatever the layout), and ldmatrix's .trans does the
//   transposing: an A fragment is (m, k) with k adjacent in a register, so a
//   k-contiguous tile (row-major A) loads plainly and an m-contiguous one
//   (stored-transposed A) loads with .trans; B fragments are (k, n) with k
//   adjacent, so row-major B (n-contiguous) takes .trans and stored-transposed
//   B (k-contiguous) the plain form.
// Banks: a row of a k-contiguous tile is 32 bf16 = 64 bytes; 8 rows read by one
//   ldmatrix matrix would fall on 4 bank groups twice. Padding each row by 16
//   bytes (80 and 272 bytes per row) puts the 8 rows of every matrix on 8
//   different 16-byte bank groups: one wavefront per matrix (swizzling the
//   16-byte chunks instead saves the padding; v13 lets TMA do that). The
//   cp.async writes of a k-contiguous tile (4 chunks per row) go a chunk
//   index down 8 rows per quarter warp, so they are conflict-free too.
// Edges: a 16-byte chunk past the edge is zero-filled by cp.async (src-size 0).
//   When the contiguous dimension is not a multiple of 8 elements, rows are
//   not 16-byte aligned and chunks are copied element by element instead
//   (through registers, synchronously); the epilogue guards every store.
// Changed from v11: PTX mma.sync + ldmatrix instead of wmma (the same
//   128x128 block tile and 64x32 warp tiles); cp.async double buffering
//   instead of a prefetch through registers; bf16 (the training format:
//   fp32's range, no loss scaling).
// Trace (emulator, 128x128x128, each of the four layouts): global loads 16
//   sectors per 16-byte request (100%), stores 8-byte pairs at 100%; ldmatrix
//   and cp.async shared accesses 1.00-way (no bank conflicts); 112 memory
//   instructions per warp.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   0.555 ms = 248 TFLOP/s at 4096^3, 32.5% of cuBLAS bf16 in the same run; 241 TFLOP/s at 8192^3, 30.4%.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace matmul/12 --size 128,128,128
#include "kernels/common/mma_store.hpp"
#include "kernels/common/ptx.hpp"

namespace mma_sync_v12 {

// Copies an R x CC tile of a row-major rows x cols matrix of 16-bit elements
// (top-left element (r0, c0); CC along the contiguous dimension) to shared
// `dst` with a row pitch of `pitch` elements; zeros past the matrix's edges.
// aligned: every row starts 16 bytes aligned (cols % 8 == 0), so whole
// 16-byte chunks go by cp.async; otherwise element by element.
template <int R, int CC, int THREADS, class T>
__device__ __forceinline__ void stage_tile(T* dst, int pitch, const T* __restrict__ src, int rows, int cols, int r0,
                                           int c0, bool aligned) {
  constexpr int CHUNK = 8, CHUNKS_PER_ROW = CC / CHUNK;  // 8 elements = 16 bytes
  static_assert(CC % CHUNK == 0 && (R * CHUNKS_PER_ROW) % THREADS == 0, "whole chunks, the same count per thread");
  static_assert(CHUNKS_PER_ROW >= 8 || R % 8 == 0, "short rows are taken 8 at a time");
  for (int i = threadIdx.x; i < R * CHUNKS_PER_ROW; i += THREADS) {
    // Long rows (>= 8 chunks): consecutive threads take consecutive chunks of
    // a row. Short rows (the k-contiguous tiles, 4 chunks): a quarter warp
    // takes one chunk index down 8 rows, which the padded pitch spreads over 8
    // bank groups (consecutive chunks of two rows would hit one group twice);
    // a warp still reads 8 whole rows, the same sectors.
    const int r = CHUNKS_PER_ROW >= 8 ? i / CHUNKS_PER_ROW : i % 8 + 8 * (i / (8 * CHUNKS_PER_ROW));
    const int c = (CHUNKS_PER_ROW >= 8 ? i % CHUNKS_PER_ROW : (i / 8) % CHUNKS_PER_ROW) * CHUNK;
    const int gr = r0 + r, gc = c0 + c;
    T* d = dst + r * pitch + c;
    if (aligned) {  // cols % 8 == 0: a chunk is wholly inside the matrix or wholly outside
      const bool inside = gr < rows && gc < cols;
      warpnet::ptx::cp_async_cg(d, inside ? src + size_t(gr) * cols + gc : src, inside ? 16 : 0);
    } else {
      for (int j = 0; j < CHUNK; ++j)
        d[j] = gr < rows && gc + j < cols ? src[size_t(gr) * cols + gc + j] : T(0.0f);
    }
  }
}

}  // namespace mma_sync_v12

// A: (M,K) row-major bf16, or (K,M) when TA; B: (K,N) row-major bf16, or (N,K)
// when TB; C: (M,N) row-major fp32. C = op(A) @ op(B).
// Launch: block ((BM/WM)*(BN/WN)*32); grid (ceil(N/BN), ceil(M/BM)).
template <int BM, int BN, int BK, int WM, int WN, bool TA = false, bool TB = false>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
    gemm_mma_sync(int M, int N, int K, const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                  float* __restrict__ C) {
  using T = __nv_bfloat16;
  constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;
  constexpr int MI = WM / 16, NI = WN / 8;  // m16 x n8 fragments per warp tile
  constexpr int PAD = 8;                    // 16 bytes per shared row: conflict-free ldmatrix (header)
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0,
                "warp tiles of whole m16 x n16 pairs, k in steps of 16");
  // Shared tiles as stored: A k-contiguous unless TA, B k-contiguous only when TB.
  constexpr int A_PITCH = TA ? BM + PAD : BK + PAD, A_ELEMS = TA ? BK * A_PITCH : BM * A_PITCH;
  constexpr int B_PITCH = TB ? BK + PAD : BN + PAD, B_ELEMS = TB ? BN * B_PITCH : BK * B_PITCH;
  // As[s]: (BM, BK+8) = op(A) tile, or (BK, BM+8) = its stored transpose when TA; stage s.
  __shared__ __align__(16) T As[2][A_ELEMS];
  // Bs[s]: (BK, BN+8) = op(B) tile, or (BN, BK+8) = its stored transpose when TB; stage s.
  __shared__ __align__(16) T Bs[2][B_ELEMS];

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;  // this warp's tile inside the block's
  // Rows of the stored matrices are 16-byte aligned when their length is a multiple of 8.
  const bool a_aligned = (TA ? M : K) % 8 == 0, b_aligned = (TB ? K : N) % 8 == 0;

  auto stage = [&](int s, int k0) {  // the tiles of step k0 into stage s: one cp.async group
    if constexpr (TA) mma_sync_v12::stage_tile<BK, BM, THREADS>(As[s], A_PITCH, A, K, M, k0, row0, a_aligned);
    else mma_sync_v12::stage_tile<BM, BK, THREADS>(As[s], A_PITCH, A, M, K, row0, k0, a_aligned);
    if constexpr (TB) mma_sync_v12::stage_tile<BN, BK, THREADS>(Bs[s], B_PITCH, B, N, K, col0, k0, b_aligned);
    else mma_sync_v12::stage_tile<BK, BN, THREADS>(Bs[s], B_PITCH, B, K, N, k0, col0, b_aligned);
    warpnet::ptx::cp_async_commit();  // empty when nothing went async; still counts for wait_group
  };

  // ldmatrix.x4: lane l gives the address of row l%8 of matrix l/8.
  const int mat = lane / 8, mrow = lane % 8;
  // A fragment (m16 x k16 at (m, k) of the block tile): matrices (m 0-7, k 0-7),
  // (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15) are a0a1, a2a3, a4a5, a6a7.
  auto a_row = [&](int s, int m, int k) -> const T* {
    return TA ? &As[s][(k + mrow + 8 * (mat / 2)) * A_PITCH + m + 8 * (mat % 2)]   // stored rows are k: .trans
              : &As[s][(m + mrow + 8 * (mat % 2)) * A_PITCH + k + 8 * (mat / 2)];  // stored rows are m
  };
  // B fragments of two n8 tiles (k16 x n16 at (k, n)): matrices (n 0-7, k 0-7),
  // (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15) are b0b1, b2b3 of the
  // left tile, then of the right one.
  auto b_row = [&](int s, int k, int n) -> const T* {
    return TB ? &Bs[s][(n + mrow + 8 * (mat / 2)) * B_PITCH + k + 8 * (mat % 2)]   // stored rows are n
              : &Bs[s][(k + mrow + 8 * (mat % 2)) * B_PITCH + n + 8 * (mat / 2)];  // stored rows are k: .trans
  };

  float acc[MI][NI][4] = {};  // acc[i][j]: C fragment of rows wm0+16i.., columns wn0+8j..
  const int steps = warpnet::ceil_div(K, BK);
  stage(0, 0);
  for (int step = 0; step < steps; ++step) {
    const int s = step % 2;
    if (step + 1 < steps) {
      stage(1 - s, (step + 1) * BK);     // the next tiles fly while this step computes
      warpnet::ptx::cp_async_wait<1>();  // all but the newest group: stage s has landed
    } else {
      warpnet::ptx::cp_async_wait<0>();
    }
    __syncthreads();  // every thread's copies into stage s are visible
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      uint32_t a[MI][4], b[NI / 2][4];  // a[i]: one A fragment; b[j]: B fragments of n8 tiles 2j, 2j+1
#pragma unroll
      for (int i = 0; i < MI; ++i) warpnet::ptx::ldmatrix_m8n8<4, TA>(a[i], a_row(s, wm0 + 16 * i, kk));
#pragma unroll
      for (int j = 0; j < NI / 2; ++j) warpnet::ptx::ldmatrix_m8n8<4, !TB>(b[j], b_row(s, kk, wn0 + 16 * j));
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) {
          const uint32_t bj[2] = {b[j / 2][2 * (j % 2)], b[j / 2][2 * (j % 2) + 1]};
          warpnet::ptx::mma_m16n8k16_bf16_f32(acc[i][j], a[i], bj, acc[i][j]);
        }
    }
    __syncthreads();  // every warp is done with stage s before it is refilled
  }

  warpnet::store_mma_fragments(acc, C, M, N, row0 + wm0, col0 + wn0, lane);
}
