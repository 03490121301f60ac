// SGEMM v9 — warp tiling: block tile -> warp tiles -> thread tiles, the
// hierarchy CUTLASS's SIMT GEMMs use, on top of v8's double buffering.
//
// Idea: v8 lays its 256 threads over the 128x128 block tile as a 16x16 grid,
//   so a warp (2 rows of 16 threads) spans 16 rows and all 128 columns of C
//   and its lanes read, per k, 16 distinct floats of A and 128 of B. Here the
//   block tile (BM x BN) is cut into warp tiles (WM x WN, one per warp), each
//   warp tile into WMITER x WNITER sub-tiles, and a sub-tile among the warp's
//   32 lanes as thread tiles of TM x TN. Registered shape: 128x128 block,
//   8 warps of 64x32, 2x2 sub-tiles of 32x16, lanes 8x4 with 4x4 each. Per k a
//   warp now reads 64 distinct floats of A and 32 of B (96 instead of 144) for
//   the same 2048 products; each float read is used 8 times from a register,
//   as in v8. A quarter warp's float4 reads of A hit 32 contiguous bytes (two
//   row pieces, the other lanes broadcast) and of B 64 contiguous bytes: no
//   bank conflicts. Every level is a template parameter, so v10 can try other
//   shapes (128x64, 256x128, one-warp blocks...) with the same code, and a
//   grid with a z dimension splits K among blocks (v10's split-K) or, in
//   sgemm_warptiling_batched, runs a batch of products (conv v10's GEMMs).
// Changed from v8: the thread -> C mapping goes through warps and sub-tiles;
//   BK = 16 (two k-tiles in 33 KiB), so one barrier per 16 k instead of per 8;
//   the global -> shared copies are v8's (sgemm_v8::stage_tile: 16-byte
//   cp.async where the layout allows it, 4-byte transposing ones otherwise),
//   double buffered with one __syncthreads() per k-step. The k loop is
//   unrolled by `#pragma unroll` (added after 2026-11-30's runs: the run-1
//   SASS held 64 FFMA, one k per trip, so each trip waited on its own shared
//   loads); ptxas then gives 126-128 registers at 128x128, two blocks per SM.
//   Since 2026-12-05 the kernel has a switch for its copies, HOISTED
//   (sgemm_hoisted_copies.hpp, v10's candidates 12-14), and the blocks an
//   SM is asked to hold, MIN_BLOCKS; v9 as registered keeps v8's copies
//   and asks nothing, and is the same machine code (128 registers, its
//   loop 1800 instructions in the SASS).
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   3.96 ms = 34.7 TFLOP/s at 4096^3, 68.3% of cuBLAS SGEMM in the same run; 35.0 TFLOP/s at 8192^3, 68.6%.
//   2026-11-30, before the unrolled k loop: 63.0%/64.1%.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace matmul/09 --size 128,128,128
#include "kernels/matmul/08_double_buffered.cu"  // sgemm_v8::stage_tile, the cp.async copies
#include "kernels/matmul/sgemm_hoisted_copies.hpp"

namespace sgemm_v9 {

// One stage's BK k-steps of a warp's tile (conv v9 multiplies its stages
// with it too): acc[i][j] += sum over k of As[k][a0 + (i/TM)·WSUBM + i%TM] ·
// Bs[k][b0 + (j/TN)·WSUBN + j%TN], the operands read as float4s. As: (BK,
// LDA), Bs: (BK, LDB) shared, k-major; a0, b0: the lane's first row and
// column in them. Unrolled, so the scheduler can issue step k+1's shared
// loads under step k's FMAs; left to itself nvcc kept one k per trip round
// the loop (64 FFMA in the run-1 SASS).
template <int BK, int LDA, int LDB, int WMITER, int WNITER, int WSUBM, int WSUBN, int TM, int TN>
__device__ __forceinline__ void multiply_stage(const float* As, const float* Bs, int a0, int b0,
                                               float (&acc)[WMITER * TM][WNITER * TN]) {
#pragma unroll
  for (int k = 0; k < BK; ++k) {
    float a[WMITER * TM], b[WNITER * TN];  // the warp-tile column of op(A) and row of op(B) this lane needs
#pragma unroll
    for (int i = 0; i < WMITER * TM; i += 4) {
      const float4 v = ::warpnet::load_float4(&As[k * LDA + a0 + (i / TM) * WSUBM + i % TM]);
      a[i] = v.x, a[i + 1] = v.y, a[i + 2] = v.z, a[i + 3] = v.w;
    }
#pragma unroll
    for (int j = 0; j < WNITER * TN; j += 4) {
      const float4 v = ::warpnet::load_float4(&Bs[k * LDB + b0 + (j / TN) * WSUBN + j % TN]);
      b[j] = v.x, b[j + 1] = v.y, b[j + 2] = v.z, b[j + 3] = v.w;
    }
#pragma unroll
    for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
      for (int j = 0; j < WNITER * TN; ++j) acc[i][j] += a[i] * b[j];
  }
}

// Rows of the shared tiles stay 16-byte aligned; transposing copies spread over the banks (v8).
constexpr int kPad = 4;

// The block tile (blockIdx.x, blockIdx.y) of C = op(A) @ op(B), summed over
// k in [k_begin, k_end) only; the two kernels below choose the operands and
// the k range by blockIdx.z. Shapes as sgemm_warptiling's; As, Bs: the
// kernel's __shared__ stages (declared there, where the emulator's checker
// looks for a kernel's shared memory):
//   As[s][k][m] = op(A)[row0 + m, k0 + k]: (BK, BM) transposed A tile, stage s
//   Bs[s][k][n] = op(B)[k0 + k, col0 + n]: (BK, BN) B tile, stage s
// HOISTED: each thread's copies worked out once (sgemm_hoisted_copies.hpp,
// v10's candidates 12-14) instead of by v8's stage_tile at every k-step;
// only for problems where sgemm_copies::apply holds (the launch checks).
// Without a fallback to stage_tile beside them, the loop is 1193
// instructions in v9's shape, not 1455 (nvcc 13.0, sm_90a, NN).
template <int BM, int BN, int BK, int WM, int WN, int WMITER, int WNITER, int TM, int TN, bool TA, bool TB,
          int STAGES, bool HOISTED = false>
__device__ __forceinline__ void block_tile(int M, int N, int K, const float* __restrict__ A,
                                           const float* __restrict__ B, float* __restrict__ C, int k_begin,
                                           int k_end, float (&As)[STAGES][BK][BM + kPad],
                                           float (&Bs)[STAGES][BK][BN + kPad]) {
  constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;
  constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;    // one sub-iteration's piece of the warp tile
  constexpr int LANES_M = WSUBM / TM, LANES_N = WSUBN / TN;  // the lanes laid over that piece
  using warpnet::store_float4;  // 16-byte accesses the tracer sees whole (float4_rows.hpp)
  constexpr int PAD = kPad;
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles cover the block tile");
  static_assert(WM % WMITER == 0 && WN % WNITER == 0 && WSUBM % TM == 0 && WSUBN % TN == 0,
                "sub-tiles cover the warp tile, thread tiles the sub-tile");
  static_assert(LANES_M * LANES_N == 32, "a sub-tile is exactly one thread tile per lane");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are read from shared memory as float4s");
  static_assert(THREADS <= 1024, "at most 1024 threads per block");
  static_assert(STAGES >= 2, "one stage computed while the next one lands");
  static_assert(STAGES * BK * (BM + BN + 2 * PAD) * 4 <= 48 * 1024, "the stages fit in 48 KiB of static shared memory");

  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;  // the warp tile, within the block tile
  const int lm = (lane / LANES_N) * TM, ln = (lane % LANES_N) * TN;     // the thread tile, within a sub-tile
  [[maybe_unused]] const bool a_vec = TA && ::warpnet::float4_rows(A, M);  // v8's copies' choice
  [[maybe_unused]] const bool b_vec = !TB && ::warpnet::float4_rows(B, N);
  // acc[i][j]: C at row wm0 + (i/TM)*WSUBM + lm + i%TM, column wn0 + (j/TN)*WSUBN + ln + j%TN
  // of the block tile: WMITER x WNITER thread tiles of TM x TN, in registers.
  float acc[WMITER * TM][WNITER * TN] = {};
  // Each thread's copies worked out once (HOISTED), else nothing. A's tile
  // comes down k (KMajor) when A is stored (K,M); B's when B is (K,N).
  [[maybe_unused]] const auto a_copies = [&] {
    if constexpr (HOISTED) return sgemm_copies::OperandCopies<BK, BM, BM + PAD, THREADS, TA>(row0, M, K, t);
    else return 0;
  }();
  [[maybe_unused]] const auto b_copies = [&] {
    if constexpr (HOISTED) return sgemm_copies::OperandCopies<BK, BN, BN + PAD, THREADS, !TB>(col0, N, K, t);
    else return 0;
  }();
  auto stage = [&](int s, int k0) {
    if constexpr (HOISTED) {  // launched only where sgemm_copies::apply holds: k-major rows of whole float4s
      a_copies.copy(&As[s][0][0], A, k0, K);
      b_copies.copy(&Bs[s][0][0], B, k0, K);
      warpnet::ptx::cp_async_commit();
    } else {
      sgemm_v8::stage_operands<BK, BM, BN, PAD, THREADS, TA, TB>(&As[s][0][0], &Bs[s][0][0], A, B, M, N, K, row0,
                                                                  col0, k0, t, a_vec, b_vec);
    }
  };
  auto multiply = [&](int s) {
    sgemm_v9::multiply_stage<BK, BM + PAD, BN + PAD, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(
        &As[s][0][0], &Bs[s][0][0], wm0 + lm, wn0 + ln, acc);
  };

  const int steps = ::warpnet::ceil_div(k_end - k_begin, BK);  // <= 0 for a slice past K: C[z] = 0
  if constexpr (STAGES == 2) {
    // v9's loop as measured. The ring below does the same with two stages,
    // but its bookkeeping cost the NN instance a 129th register (nvcc 13,
    // sm_90): one block an SM instead of two.
    if (steps > 0) stage(0, k_begin);
    for (int step = 0; step < steps; ++step) {
      const int s = step % 2;
      warpnet::ptx::cp_async_wait<0>();  // this thread's copies into stage s have landed
      __syncthreads();                   // everyone's have; everyone is done with stage 1-s (v8)
      if (step + 1 < steps) stage(1 - s, k_begin + (step + 1) * BK);
      multiply(s);
    }
  } else {
    // A ring: k-step `step` in stage step % STAGES, one cp.async group a
    // step, an empty one past the last so that the wait count holds.
    auto stage_step = [&](int step) {
      if (step < steps) stage(step % STAGES, k_begin + step * BK);
      else warpnet::ptx::cp_async_commit();
    };
    for (int s = 0; s < STAGES - 1; ++s) stage_step(s);
    for (int step = 0; step < steps; ++step) {
      // STAGES-1+step groups are committed; step's is the oldest not yet
      // waited for: this thread's copies into its stage have landed.
      warpnet::ptx::cp_async_wait<STAGES - 2>();
      __syncthreads();  // everyone's have; everyone is done with step-1's stage, refilled next
      stage_step(step + STAGES - 1);
      multiply(step % STAGES);
    }
    warpnet::ptx::cp_async_wait<0>();  // the trailing groups are empty; none is left behind
  }

  // float4 stores where a row is whole float4s; guarded scalar stores at the edges.
  const bool c_vec = ::warpnet::float4_rows(C, N);
  for (int i = 0; i < WMITER * TM; ++i) {
    const int r = row0 + wm0 + (i / TM) * WSUBM + lm + i % TM;
    for (int j = 0; j < WNITER * TN && r < M; j += 4) {
      const int c = col0 + wn0 + (j / TN) * WSUBN + ln + j % TN;
      const float* v = &acc[i][j];
      if (c_vec && c + 3 < N) {
        store_float4(&C[size_t(r) * N + c], make_float4(v[0], v[1], v[2], v[3]));
      } else {
        for (int q = 0; q < 4; ++q)
          if (c + q < N) C[size_t(r) * N + c + q] = v[q];
      }
    }
  }
}

}  // namespace sgemm_v9

// A: (M,K) row-major, or (K,M) when TA; B: (K,N) row-major, or (N,K) when TB;
// C: (M,N) row-major. C = op(A) @ op(B).
// Launch: block ((BM/WM) * (BN/WN) * 32); grid (ceil(N/BN), ceil(M/BM)[, S]).
// With S = gridDim.z > 1 (v10's split-K) C is (S,M,N): block z sums only its
// slice of k, whole BK-steps from z * ceil(ceil(K/S)/BK) * BK, into C[z], and
// the caller adds the S partial products up. STAGES k-tiles in shared
// memory: two as registered (v9), three in two of v10's candidates, whose
// 8-deep k-steps leave a copy only one short step to land in with two.
// MIN_BLOCKS: the blocks an SM is to hold, which caps ptxas's registers a
// thread (2 x 256 threads: 128); 0 asks nothing (even 1 changes what
// ptxas makes of v9's loop). v9 fits two blocks unasked; v10's hoisted
// candidate in v9's shape asks (125-128 registers, no spills, nvcc 13.0,
// sm_90a; 147-157 unasked, one block).
template <int BM, int BN, int BK, int WM, int WN, int WMITER, int WNITER, int TM, int TN, bool TA = false,
          bool TB = false, int STAGES = 2, bool HOISTED = false, int MIN_BLOCKS = 0>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MIN_BLOCKS)
    sgemm_warptiling(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                     float* __restrict__ C) {
  // The slice is whole BK-steps, so only the last one, which ends at K, has
  // a partial step: the copies' bound stays K.
  const int k_slice = ::warpnet::ceil_div(::warpnet::ceil_div(K, gridDim.z), BK) * BK;  // K when not split
  const int k_begin = blockIdx.z * k_slice, k_end = min(K, k_begin + k_slice);
  __shared__ __align__(16) float As[STAGES][BK][BM + sgemm_v9::kPad];  // the stages (sgemm_v9::block_tile)
  __shared__ __align__(16) float Bs[STAGES][BK][BN + sgemm_v9::kPad];
  float* C_z = C + size_t(blockIdx.z) * M * N;
  sgemm_v9::block_tile<BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, TA, TB, STAGES, HOISTED>(M, N, K, A, B, C_z,
                                                                                           k_begin, k_end, As, Bs);
}

// A batch of independent products of one shape, one per z of the grid (conv
// v10's 16 Winograd GEMMs in one launch): C_z = op(A_z) @ op(B_z), X_z =
// X + z · stride_x, each as sgemm_warptiling's operands.
// Launch: block ((BM/WM) * (BN/WN) * 32); grid (ceil(N/BN), ceil(M/BM), batch).
// One launch instead of one per product: a product too small to fill the
// GPU (conv v10 at 14x14, 256 channels: 50 blocks of 128x128 for 132 SMs)
// shares the waves with the others.
// Two blocks per SM asked of the register allocator: left alone, ptxas gave
// the 128x128 tile 129 registers (the batch offsets), one block per SM where
// sgemm_warptiling's 128 allow two; held to 128 it spills nothing (sm_90a,
// nvcc 13.0; bench/results/ptxas-sm90a-2026-12-07.txt).
template <int BM, int BN, int BK, int WM, int WN, int WMITER, int WNITER, int TM, int TN, bool TA = false,
          bool TB = false>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 2)
    sgemm_warptiling_batched(int M, int N, int K, const float* __restrict__ A, size_t stride_a,
                             const float* __restrict__ B, size_t stride_b, float* __restrict__ C, size_t stride_c) {
  __shared__ __align__(16) float As[2][BK][BM + sgemm_v9::kPad];  // the two stages (sgemm_v9::block_tile)
  __shared__ __align__(16) float Bs[2][BK][BN + sgemm_v9::kPad];
  const size_t z = blockIdx.z;
  sgemm_v9::block_tile<BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, TA, TB>(M, N, K, A + z * stride_a, B + z * stride_b,
                                                                          C + z * stride_c, 0, K, As, Bs);
}
