// GEMM v14 — fp8 e4m3 inputs on tensor cores: mma.sync m16n8k32, fp32 accumulation.
//
// Idea: halve the bytes again. An e4m3 value is one byte (4 exponent bits, 3
//   mantissa bits, largest finite 448), so a tile of the same bytes holds
//   twice the k of v12 and a tensor core instruction does twice the work
//   (m16n8k32: 4096 multiply-adds, as many bytes of operands as m16n8k16 bf16)
//   — at twice the rate on Ada; on the H200 mma.sync fp8 ran 2.5x slower
//   than v12's bf16 (Measured, below): Hopper's fp8 rate is wgmma's alone.
//   The block is v12's: 8 warps, a 128x128 C tile, 64x32 per warp (4x4
//   fragments), k-steps of 64 (64 bytes per row, as v12's 32 bf16), two
//   shared stages, ldmatrix.x4 from rows padded by 16 bytes (conflict-free).
//   ldmatrix moves 16-bit elements, yet the fp8 fragments need no new load:
//   a lane's register of an 8x8 b16 matrix is 4 consecutive bytes of one row,
//   which is exactly the A (row, 4 consecutive k) and B (column, 4 consecutive
//   k) slot of m16n8k32 when both operands sit in shared memory k-contiguous.
// Layouts: 8-bit tensor-core operands must be k-major — there is no .trans for
//   bytes (ldmatrix transposes 16-bit elements; Hopper's wgmma transposes only
//   16-bit types too). So both shared tiles are always k-contiguous, (BM, BK)
//   for A and (BN, BK) for B, and an operand stored the other way round (A
//   when TA, B when not TB — the plain row-major B!) is transposed on its way
//   in: each thread reads 4 bytes down 4 k-rows of one column (coalesced
//   across the warp: consecutive lanes take consecutive columns), packs them
//   into one 32-bit word and stores it, synchronously, through registers.
//   k-contiguous operands go by cp.async, 16 bytes per copy, when rows are
//   16-byte aligned (K % 16 == 0); otherwise byte by byte.
//   The transposing stores are 4-way bank-conflicted (32 rows of an 80-byte
//   pitch fall on 8 word banks). The next step: 32-bit loads of 4 columns
//   from 4 k-rows and a 4x4 byte transpose in registers (4x fewer loads),
//   with a swizzled tile so that its stores are conflict-free as well.
// Edges: zero-filled tiles (src-size 0, or zeros stored), guarded stores; any M, N, K.
// Precision: inputs are rounded to e4m3 (relative error 2^-4); products are
//   exact and sums fp32 here and in the emulator. On an H200 (2026-11-30)
//   this kernel met the fp32-sum bound at every test size; cuBLASLt's fp8,
//   which runs on wgmma, did not: inside one of its instructions the sums
//   keep about 14 bits (src/device/cuda/matmul_cublas.cu).
// Changed from v12: e4m3 instead of bf16; mma.sync m16n8k32 instead of
//   m16n8k16; transposition moved from ldmatrix.trans into the staging.
// Hopper-optimal form (not this file): wgmma.mma_async m64nNk32 .e4m3 from
//   shared-memory descriptors fed by TMA, as v13 does for bf16 (the datasheet's
//   fp8 peak is twice bf16's, and Hopper reaches its tensor peak only through
//   wgmma, so this mma.sync form will fall short of the cuBLASLt FP8 target);
//   k-major tiles there too (wgmma has no fp8 transpose), so the transposed
//   layouts would need a transposing pass or register staging first. This
//   form is the one the emulator can check (m16n8k32 is in src/simt/ptx.hpp).
// Trace (emulator, 128x128x128): stored-transposed B (k-major both, the fp8
//   "TN" layout): 16 sectors per cp.async request, ldmatrix and cp.async
//   writes 1.00-way, 72 memory instructions per warp. One operand transposed
//   on its way in (row-major B, or stored-transposed A): its byte loads take 1
//   sector per request, its stores are 4-way conflicted, 144 memory
//   instructions per warp; both operands (TA with row-major B): 216.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   1.41 ms = 97.4 TFLOP/s at 4096^3, 10.7% of cuBLASLt fp8 in the same run; 78.3 TFLOP/s at 8192^3, 6.50%.
//   Both with a row-major B (trans_b = 0): the transposing path above.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace matmul/14 --size 128,128,128,0,1
#include "kernels/common/mma_store.hpp"
#include "kernels/common/ptx.hpp"

namespace fp8_v14 {

// Copies the (R, BK) k-contiguous tile at rows r0.., k0.. of a k-contiguous
// rows x K byte matrix (`src`, row-major) into shared `dst` (row pitch
// `pitch` bytes); zeros past the edges. aligned: K % 16 == 0, so every row
// starts 16-byte aligned and a 16-byte chunk is wholly inside or outside.
template <int R, int BK, int THREADS>
__device__ __forceinline__ void stage_k_major(unsigned char* dst, int pitch, const unsigned char* __restrict__ src,
                                              int rows, int K, int r0, int k0, bool aligned) {
  constexpr int CHUNK = 16, CHUNKS_PER_ROW = BK / CHUNK;
  static_assert((R * CHUNKS_PER_ROW) % THREADS == 0 && CHUNKS_PER_ROW <= 8 && R % 8 == 0, "whole chunks, 8 rows at a time");
  for (int i = threadIdx.x; i < R * CHUNKS_PER_ROW; i += THREADS) {
    // A quarter warp takes one chunk index down 8 rows: the padded pitch (5
    // bank groups) spreads them over all 8 groups; a warp reads 8 whole rows.
    const int r = i % 8 + 8 * (i / (8 * CHUNKS_PER_ROW)), k = ((i / 8) % CHUNKS_PER_ROW) * CHUNK;
    const int gr = r0 + r, gk = k0 + k;
    unsigned char* d = dst + r * pitch + k;
    if (aligned) {
      const bool inside = gr < rows && gk < K;
      warpnet::ptx::cp_async_cg(d, inside ? src + size_t(gr) * K + gk : src, inside ? 16 : 0);
    } else {
      for (int j = 0; j < CHUNK; ++j) d[j] = gr < rows && gk + j < K ? src[size_t(gr) * K + gk + j] : 0;
    }
  }
}

// Fills the same (R, BK) k-contiguous shared tile from an operand stored the
// other way: `src` is K x cols row-major (k rows, the tile's rows r0.. are its
// columns). Each thread moves 4 k of one column: 4 byte loads, one 32-bit store.
template <int R, int BK, int THREADS>
__device__ __forceinline__ void stage_transposing(unsigned char* dst, int pitch, const unsigned char* __restrict__ src,
                                                  int cols, int K, int r0, int k0) {
  static_assert(BK % 4 == 0 && (R * (BK / 4)) % THREADS == 0 && R % 32 == 0, "whole 4-byte words, warps along a row");
  for (int i = threadIdx.x; i < R * (BK / 4); i += THREADS) {
    const int r = i % R, k = (i / R) * 4;  // consecutive lanes: consecutive columns of one k-row (coalesced)
    const int gc = r0 + r;
    uint32_t word = 0;  // k, k+1, k+2, k+3 from the lowest byte up, as the fragments want them
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (gc < cols && k0 + k + j < K) word |= uint32_t(src[size_t(k0 + k + j) * cols + gc]) << (8 * j);
    *reinterpret_cast<uint32_t*>(dst + r * pitch + k) = word;
  }
}

}  // namespace fp8_v14

// A: (M,K) row-major e4m3, or (K,M) when TA; B: (K,N) row-major e4m3, or (N,K)
// when TB; C: (M,N) row-major fp32. C = op(A) @ op(B).
// Launch: block ((BM/WM)*(BN/WN)*32); grid (ceil(N/BN), ceil(M/BM)). Needs sm_89+.
template <int BM, int BN, int BK, int WM, int WN, bool TA = false, bool TB = false>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
    gemm_fp8(int M, int N, int K, const __nv_fp8_e4m3* __restrict__ A, const __nv_fp8_e4m3* __restrict__ B,
             float* __restrict__ C) {
  constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;
  constexpr int MI = WM / 16, NI = WN / 8;  // m16 x n8 fragments per warp tile
  constexpr int PITCH = BK + 16;            // bytes per shared row: 16 of padding, conflict-free ldmatrix
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && BK % 32 == 0,
                "warp tiles of whole m16 x n16 pairs, k in steps of 32");
  __shared__ __align__(16) unsigned char As[2][BM * PITCH];  // As[s]: (BM, BK+16) bytes, op(A) tile k-contiguous, stage s
  __shared__ __align__(16) unsigned char Bs[2][BN * PITCH];  // Bs[s]: (BN, BK+16) bytes, op(B)^T tile k-contiguous, stage s

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
  const auto* a_bytes = reinterpret_cast<const unsigned char*>(A);  // e4m3 bit patterns, moved as bytes
  const auto* b_bytes = reinterpret_cast<const unsigned char*>(B);
  const bool k_aligned = K % 16 == 0;

  auto stage = [&](int s, int k0) {  // the tiles of step k0 into stage s: one cp.async group
    if constexpr (TA) fp8_v14::stage_transposing<BM, BK, THREADS>(As[s], PITCH, a_bytes, M, K, row0, k0);
    else fp8_v14::stage_k_major<BM, BK, THREADS>(As[s], PITCH, a_bytes, M, K, row0, k0, k_aligned);
    if constexpr (TB) fp8_v14::stage_k_major<BN, BK, THREADS>(Bs[s], PITCH, b_bytes, N, K, col0, k0, k_aligned);
    else fp8_v14::stage_transposing<BN, BK, THREADS>(Bs[s], PITCH, b_bytes, N, K, col0, k0);
    warpnet::ptx::cp_async_commit();
  };

  // ldmatrix.x4: lane l gives the address of row l%8 of matrix l/8 (16 bytes = 16 k).
  const int mat = lane / 8, mrow = lane % 8;
  // A fragment (m16 x k32): matrices (m 0-7, k 0-15), (m 8-15, k 0-15),
  // (m 0-7, k 16-31), (m 8-15, k 16-31) are registers a0-3, a4-7, a8-11, a12-15.
  auto a_row = [&](int s, int m, int k) -> const unsigned char* {
    return &As[s][(m + mrow + 8 * (mat % 2)) * PITCH + k + 16 * (mat / 2)];
  };
  // B fragments of two n8 tiles (k32 x n16): matrices (n 0-7, k 0-15),
  // (n 0-7, k 16-31) are b0-3, b4-7 of the left tile; then the right one.
  auto b_row = [&](int s, int k, int n) -> const unsigned char* {
    return &Bs[s][(n + mrow + 8 * (mat / 2)) * PITCH + k + 16 * (mat % 2)];
  };

  float acc[MI][NI][4] = {};  // acc[i][j]: C fragment of rows wm0+16i.., columns wn0+8j..
  const int steps = warpnet::ceil_div(K, BK);
  stage(0, 0);
  for (int step = 0; step < steps; ++step) {
    const int s = step % 2;
    if (step + 1 < steps) {
      stage(1 - s, (step + 1) * BK);  // stage 1-s was released by the barrier that ended the last step
      warpnet::ptx::cp_async_wait<1>();
    } else {
      warpnet::ptx::cp_async_wait<0>();
    }
    __syncthreads();  // every thread's copies and stores into stage s are visible
#pragma unroll
    for (int kk = 0; kk < BK; kk += 32) {
      uint32_t a[MI][4], b[NI / 2][4];
#pragma unroll
      for (int i = 0; i < MI; ++i) warpnet::ptx::ldmatrix_m8n8<4>(a[i], a_row(s, wm0 + 16 * i, kk));
#pragma unroll
      for (int j = 0; j < NI / 2; ++j) warpnet::ptx::ldmatrix_m8n8<4>(b[j], b_row(s, kk, wn0 + 16 * j));
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) {
          const uint32_t bj[2] = {b[j / 2][2 * (j % 2)], b[j / 2][2 * (j % 2) + 1]};
          warpnet::ptx::mma_m16n8k32_e4m3_f32(acc[i][j], a[i], bj, acc[i][j]);
        }
    }
    __syncthreads();  // every warp is done with stage s before it is refilled
  }

  warpnet::store_mma_fragments(acc, C, M, N, row0 + wm0, col0 + wn0, lane);
}
