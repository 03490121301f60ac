// Peak v9 — matmul v09's main loop whole, copies, barrier and all, on
// operands that never leave L2.
//
// Idea: peak v1 (53.6 TFLOP/s on an H200, 2026-12-04) is v09's inner loop
//   alone, and v09 (35.0) runs at 65% of it. This version runs v09 itself
//   minus its memory traffic: each half of the block's 128x256 tile is one
//   of v09's 128x128 blocks (256 threads, 8 warps of 64x32, 4x4 thread tiles
//   in 2x2 sub-tiles: sgemm_v9::multiply_stage), two to an SM as v09 runs,
//   with v09's two stages of 16 k, its copy code (sgemm_v8::stage_operands:
//   A transposed by 4-byte cp.async, B by 16-byte ones, guards and all) and
//   its wait_group 0 + __syncthreads() per 16 k. Every k-step copies the
//   same 16 KiB of A and B, from L2. Between v1 and v9 lies what the copies
//   and the barrier cost; between v9 and matmul v09, what DRAM, L2 misses
//   and the epilogue cost.
// Changed from v1: v09's blocks, warps and pipeline, two blocks a tile.
// Measured: not yet measured on a GPU.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace peak/09 --size 2,3
#include "kernels/matmul/09_warptiling.cu"  // sgemm_v9::multiply_stage; sgemm_v8::stage_operands
#include "kernels/peak/peak_tile.hpp"

namespace peak_v09_loop {

// matmul/09's registered shape: sgemm_warptiling<128, 128, 16, 64, 32, 2, 2, 4, 4>.
constexpr int BM = 128, BN = 128, BK = peak_tile::TK, WM = 64, WN = 32, WMITER = 2, WNITER = 2, TM = 4, TN = 4;
constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;
constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER, LANES_N = WSUBN / TN;
constexpr int PAD = sgemm_v9::kPad;
constexpr int BLOCKS_PER_TILE = peak_tile::TN / BN;  // v09 blocks per 128x256 tile of the peak op
static_assert(BM == peak_tile::TM && THREADS == 256, "v09's block: all 128 rows, 256 threads");

}  // namespace peak_v09_loop

// A: (128,16) row-major fp32; B: (16,256) row-major fp32; C: (gridDim.x/2,128,256),
// C[b] = repeats * (A @ B), block 2b + h computing columns 128h..128h+127.
// Launch: block (256), grid (2 · blocks); static shared 33 KiB, as v09.
// Two blocks an SM, as v09's 128 registers give it (ptxas: 127 here, no spills).
__global__ void __launch_bounds__(peak_v09_loop::THREADS, 2)
    peak_ffma_cp_async(int repeats, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
  using namespace peak_v09_loop;
  constexpr int N = peak_tile::TN;
  __shared__ __align__(16) float As[2][BK][BM + PAD];  // v09's stages
  __shared__ __align__(16) float Bs[2][BK][BN + PAD];
  // k0 is always 0 (the operands are one k-step deep) but read from shared
  // memory after every barrier, so the compiler computes the copies'
  // addresses every k-step, as in v09 (whose k0 moves), and does not hoist
  // them out of the loop into registers v09 does not spend on them.
  __shared__ int k_origin;
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  if (t == 0) k_origin = 0;
  const int col0 = (blockIdx.x % BLOCKS_PER_TILE) * BN;
  // v09 chooses its copy at run time (float4_rows); the peak op's
  // buffers are cudaMalloc's (the emulator's too), 256-byte aligned, so B's
  // rows always take the 16-byte copies, and the 4-byte fallback, folded to
  // constant addresses here, would only cost registers (ptxas then spilled).
  constexpr bool b_vec = true;
  auto stage = [&](int s, int k0) {
    sgemm_v8::stage_operands<BK, BM, BN, PAD, THREADS, false, false>(&As[s][0][0], &Bs[s][0][0], A, B, BM, N, BK,
                                                                     0, col0, k0, t, false, b_vec);
  };
  // v09's thread -> C mapping (sgemm_v9::block_tile).
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
  const int lm = (lane / LANES_N) * TM, ln = (lane % LANES_N) * TN;
  float acc[WMITER * TM][WNITER * TN] = {};

  stage(0, 0);
  for (int r = 0; r < repeats; ++r) {
    const int s = r % 2;
    warpnet::ptx::cp_async_wait<0>();  // v09's loop: this thread's copies into stage s have landed,
    __syncthreads();                   // everyone's have, and everyone is done with stage 1-s
    if (r + 1 < repeats) stage(1 - s, k_origin);
    sgemm_v9::multiply_stage<BK, BM + PAD, BN + PAD, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(
        &As[s][0][0], &Bs[s][0][0], wm0 + lm, wn0 + ln, acc);
  }

  float* c = C + size_t(blockIdx.x / BLOCKS_PER_TILE) * BM * N + col0;
  for (int i = 0; i < WMITER * TM; ++i) {
    const int row = wm0 + (i / TM) * WSUBM + lm + i % TM;
    for (int j = 0; j < WNITER * TN; j += 4) {
      const int col = wn0 + (j / TN) * WSUBN + ln + j % TN;
      warpnet::store_float4(&c[row * N + col], make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
    }
  }
}
