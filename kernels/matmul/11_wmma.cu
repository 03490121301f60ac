// GEMM v11 — tensor cores through nvcuda::wmma: fp16 (or bf16) inputs, fp32
// accumulation, register-blocked fragments.
//
// Idea: a tensor core multiplies a 16x16 by a 16x16 tile in one warp-wide
//   instruction (4096 multiply-adds): fed one fragment pair per barrier
//   straight behind global loads, it mostly waits. A block of 8 warps
//   owns a 128x128 tile of C; each warp a 64x32 warp tile = 4x2 accumulator
//   fragments held in registers for the whole K loop. Per 16 of K a warp
//   loads 4 A fragments and 2 B fragments and issues 8 mma_sync: each A
//   fragment is used twice, each B fragment four times. Per 32-wide step of K
//   the block stages a 128x32 tile of A and a 32x128 tile of B in shared
//   memory: 16 mma_sync per warp between one pair of barriers.
// Layouts: shared tiles keep each operand as it is stored, so every stored
//   row is copied as 16-byte chunks whatever the layout, and the fragment's
//   layout does the transposing: matrix_a is row_major for a row-major A
//   (As[m][k]) and col_major for a stored-transposed one (As[k][m]); matrix_b
//   row_major for a row-major B (Bs[k][n]) and col_major when TB (Bs[n][k]).
// Prefetch: one shared stage, and the next k-tile waits in registers (two
//   16-byte chunks of A and two of B per thread): its global loads are issued
//   right after the barrier that publishes the current tile and fly while the
//   tensor cores work; they are written to shared memory after the second
//   barrier. v12 does the same with cp.async and two stages, no registers.
// Shared rows: padded by 8 elements (16 bytes). wmma wants ldm a multiple of
//   16 bytes and 32-byte-aligned fragment pointers (whole multiples of 16
//   rows and 16 columns of a padded tile are); the padding also puts the 16-byte
//   chunk stores of a quarter warp on 8 different bank groups (see StagedTile).
// Edges: where a stored row's length is a multiple of 8 and the pointer
//   16-byte aligned, a chunk is wholly inside the matrix or wholly past it:
//   one 16-byte load, or zeros. Otherwise (odd sizes) the chunk's 8 elements
//   are loaded one by one, each guarded, zero past the edge. Any M, N, K.
// Epilogue: a 16x16 accumulator fragment wholly inside C goes straight to
//   global memory with store_matrix_sync when C's rows allow it (N % 4 == 0,
//   32-byte-aligned C); one on C's edge goes through a per-warp 16x16 shared
//   staging tile and guarded stores. Shared memory, static: at most 10 KiB
//   per tile + 10 KiB of staging (27-30 KiB, the layout decides).
// Changed from v9 (the warp tiling it builds on): the same 128x128 block tile
//   and 64x32 warp tiles, but a warp tile is 4x2 wmma fragments instead of 32
//   lanes' thread tiles; A and B are 16-bit in memory (half the bytes of
//   fp32), products exact on tensor cores, sums in fp32; the next k-tile waits
//   in registers instead of flying by cp.async. The
//   first v11 had 4 warps on a 32x32 tile, K steps of 16, one mma_sync per
//   warp per barrier pair and 2-byte loads: global loads and barriers took
//   almost all of its time.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   0.996 ms = 138 TFLOP/s at 4096^3, 18.1% of cuBLAS bf16 in the same run; 143 TFLOP/s at 8192^3, 18.0%.
//   2026-11-30, before (4 warps, 32x32 tile): 30.5 TFLOP/s at 4096^3, 4.1%, slower than fp32 v09.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet bench matmul --size 4096,4096,4096 --kernels wmma
#include <type_traits>

#include "kernels/common/float4_rows.hpp"
#include "kernels/common/wmma.hpp"

namespace wmma_v11 {

// One thread's share of an R x CC tile of a row-major rows x cols matrix of
// 16-bit elements (CC along the stored rows), held in registers between the
// global load and the shared store: chunks of 8 elements (16 bytes), their
// bits carried in float4s.
template <int R, int CC, int THREADS>
struct StagedTile {
  static constexpr int CHUNK = 8, PER_ROW = CC / CHUNK, PER_THREAD = R * PER_ROW / THREADS;
  static_assert(CC % CHUNK == 0 && (R * PER_ROW) % THREADS == 0, "whole chunks, the same count per thread");
  static_assert(PER_ROW >= 8 || (PER_ROW == 4 && R % 8 == 0), "short rows (4 chunks) are taken 8 rows at a time");
  float4 chunk[PER_THREAD];

  // Tile row and column of this thread's j-th chunk. Long rows: consecutive
  // threads take consecutive chunks of a row. Short rows (a k-contiguous
  // tile, 4 chunks of 64 bytes): a quarter warp takes one chunk column down 8
  // rows, which the padded pitch (5 16-byte bank groups) spreads over all 8
  // groups; a warp still reads 8 whole rows, the same sectors.
  __device__ static int row(int j) {
    const int i = threadIdx.x + j * THREADS;
    return PER_ROW >= 8 ? i / PER_ROW : i % 8 + 8 * (i / (8 * PER_ROW));
  }
  __device__ static int col(int j) {
    const int i = threadIdx.x + j * THREADS;
    return (PER_ROW >= 8 ? i % PER_ROW : (i / 8) % PER_ROW) * CHUNK;
  }

  // The tile whose top-left element is (r0, c0); zeros past the edges.
  // vector: cols % 8 == 0 and src 16-byte aligned, so a chunk is 16 aligned
  // bytes wholly inside the matrix or wholly outside.
  template <class T>
  __device__ void load(const T* __restrict__ src, int rows, int cols, int r0, int c0, bool vector) {
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
      const int r = r0 + row(j), c = c0 + col(j);
      const T* p = src + size_t(r) * cols + c;
      if (vector) {
        chunk[j] = r < rows && c < cols ? warpnet::load_float4(reinterpret_cast<const float*>(p))
                                        : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      } else {
        T e[CHUNK];
#pragma unroll
        for (int q = 0; q < CHUNK; ++q) e[q] = r < rows && c + q < cols ? p[q] : T(0.0f);
        __builtin_memcpy(&chunk[j], e, sizeof e);
      }
    }
  }

  // Into a shared tile with a row pitch of `pitch` elements (a multiple of 8).
  template <class T>
  __device__ void store(T* dst, int pitch) const {
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j)
      warpnet::store_float4(reinterpret_cast<float*>(dst + row(j) * pitch + col(j)), chunk[j]);
  }
};

__device__ __forceinline__ bool aligned(const void* p, int bytes) { return reinterpret_cast<size_t>(p) % bytes == 0; }

}  // namespace wmma_v11

// A: (M,K) row-major T, or (K,M) when TA; B: (K,N) row-major T, or (N,K)
// when TB; C: (M,N) row-major fp32. C = op(A) @ op(B). T: __half or __nv_bfloat16.
// Launch: block ((BM/WM)*(BN/WN)*32) = 256; grid (ceil(N/BN), ceil(M/BM)).
template <class T, bool TA = false, bool TB = false, int BM = 128, int BN = 128, int BK = 32, int WM = 64,
          int WN = 32>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
    gemm_wmma(int M, int N, int K, const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C) {
  namespace wmma = nvcuda::wmma;
  constexpr int WARPS = (BM / WM) * (BN / WN), THREADS = WARPS * 32;
  constexpr int FM = WM / 16, FN = WN / 16;  // accumulator fragments per warp tile
  constexpr int PAD = 8;                     // 16 bytes per shared row (header)
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0,
                "warp tiles of whole 16x16 fragments, k in steps of 16");
  // Shared tiles as stored: A k-contiguous unless TA, B k-contiguous only when TB.
  constexpr int A_ROWS = TA ? BK : BM, A_COLS = TA ? BM : BK, A_PITCH = A_COLS + PAD;
  constexpr int B_ROWS = TB ? BN : BK, B_COLS = TB ? BK : BN, B_PITCH = B_COLS + PAD;
  constexpr int C_PITCH = 16 + 4;  // fp32 staging rows: 80 bytes, a multiple of 16
  static_assert((A_ROWS * A_PITCH + B_ROWS * B_PITCH) * sizeof(T) + WARPS * 16 * C_PITCH * 4 <= 48 * 1024,
                "static shared memory stays within 48 KiB");
  // As: (BM, BK+8) = op(A) tile, or (BK, BM+8) = its stored transpose when TA.
  __shared__ __align__(32) T As[A_ROWS * A_PITCH];
  // Bs: (BK, BN+8) = op(B) tile, or (BN, BK+8) = its stored transpose when TB.
  __shared__ __align__(32) T Bs[B_ROWS * B_PITCH];
  // Cs[w]: (16, 20) fp32, warp w's staging for fragments on C's edges.
  __shared__ __align__(32) float Cs[WARPS][16 * C_PITCH];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const int wm0 = (warp / (BN / WN)) * WM, wn0 = (warp % (BN / WN)) * WN;  // this warp's tile inside the block's
  // 16-byte chunks need stored rows of whole chunks and aligned pointers.
  const bool a_vector = (TA ? M : K) % 8 == 0 && wmma_v11::aligned(A, 16);
  const bool b_vector = (TB ? K : N) % 8 == 0 && wmma_v11::aligned(B, 16);

  wmma_v11::StagedTile<A_ROWS, A_COLS, THREADS> a_next;  // the next k-tile of A, in registers
  wmma_v11::StagedTile<B_ROWS, B_COLS, THREADS> b_next;  // and of B
  auto fetch = [&](int k0) {  // global -> registers: the k-tile starting at k0
    if constexpr (TA) a_next.load(A, K, M, k0, row0, a_vector);
    else a_next.load(A, M, K, row0, k0, a_vector);
    if constexpr (TB) b_next.load(B, N, K, col0, k0, b_vector);
    else b_next.load(B, K, N, k0, col0, b_vector);
  };
  // Fragment (m, k) of the A tile and (k, n) of the B tile; the layouts transpose (header).
  using ALayout = std::conditional_t<TA, wmma::col_major, wmma::row_major>;
  using BLayout = std::conditional_t<TB, wmma::col_major, wmma::row_major>;
  auto a_at = [&](int m, int k) -> const T* { return TA ? &As[k * A_PITCH + m] : &As[m * A_PITCH + k]; };
  auto b_at = [&](int k, int n) -> const T* { return TB ? &Bs[n * B_PITCH + k] : &Bs[k * B_PITCH + n]; };

  // acc[i][j]: C rows row0+wm0+16i.., columns col0+wn0+16j.., for the whole K loop.
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  const int steps = warpnet::ceil_div(K, BK);
  if (steps > 0) fetch(0);
  for (int step = 0; step < steps; ++step) {
    a_next.store(As, A_PITCH);
    b_next.store(Bs, B_PITCH);
    __syncthreads();                             // the tiles are complete before any warp loads fragments
    if (step + 1 < steps) fetch((step + 1) * BK);  // in flight while the tensor cores work below
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, ALayout> a[FM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, BLayout> b[FN];
#pragma unroll
      for (int i = 0; i < FM; ++i) wmma::load_matrix_sync(a[i], a_at(wm0 + 16 * i, kk), A_PITCH);
#pragma unroll
      for (int j = 0; j < FN; ++j) wmma::load_matrix_sync(b[j], b_at(kk, wn0 + 16 * j), B_PITCH);
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();  // every warp is done with the tiles before they are overwritten
  }

  // Straight to C when a fragment's 16 rows of 16 floats are inside it and its
  // pointer is 32-byte aligned with ldm = N a multiple of 4 floats (rows and
  // columns are multiples of 16 here); otherwise through Cs with guards.
  const bool c_direct = N % 4 == 0 && wmma_v11::aligned(C, 32);
  float* staging = Cs[warp];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) {
      const int r = row0 + wm0 + 16 * i, c = col0 + wn0 + 16 * j;  // the same for every lane: no divergence
      if (r >= M || c >= N) continue;
      if (c_direct && r + 16 <= M && c + 16 <= N) {
        wmma::store_matrix_sync(C + size_t(r) * N + c, acc[i][j], N, wmma::mem_row_major);
        continue;
      }
      wmma::store_matrix_sync(staging, acc[i][j], C_PITCH, wmma::mem_row_major);
      __syncwarp();  // every lane's part of the fragment is in Cs
      for (int e = lane; e < 16 * 16; e += 32) {  // half a warp per row: 64 contiguous bytes
        const int er = e / 16, ec = e % 16;
        if (r + er < M && c + ec < N) C[size_t(r + er) * N + c + ec] = staging[er * C_PITCH + ec];
      }
      __syncwarp();  // read before the next fragment overwrites it
    }
}
