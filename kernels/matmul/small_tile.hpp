// matmul v10's kernel for the smallest problems: a 32x32 tile of C in 256
// threads, a 2x2 of outputs each, k in steps of 64.
//
// Why: v9's tiles give a thread 16 to 128 outputs and walk K 8 to 32 at a
// time, each step a wait for memory. At LeNet-5's fully connected layers
// (batch 64: C of 64x120 over K = 400, 64x84 over 120, 64x10 over 84) that
// is a few blocks, each a chain of steps in which few warps wait and then
// do a long run of multiply-adds alone: on an H200 (2026-12-04,
// bench/results/train-nvidia-h200-2026-12-04-cnn.json's kernels_tuned) v10's
// best candidate took 9.7 us for 64x10x84, 54 thousand multiply-adds. Here a
// tile's 1,024 outputs are spread over 8 warps (4 each: 256 multiply-adds
// per thread per step), and a step of 64 k halves v9's smallest tile's
// steps (32x32x32). Each step's tiles are v8's cp.async copies
// (sgemm_v8::stage_operands): 16 per thread, all in flight before one wait, the
// next step's flying while this one is multiplied. Split-K as v9's (v10's
// candidates 8 and 9).
// Trace: the candidate test runs it traced in all four layouts at awkward
//   sizes (no out-of-bounds access, race or uninitialized read); `warpnet
//   trace matmul/10 --size 127,129,65` runs the table's choice, which is never this kernel.
// Measured: not yet on a GPU (written 2026-12-04 on a machine without one).
//   ptxas (nvcc 13, sm_90a): 40-64 registers by layout, no spills, 36 KiB
//   of static shared memory.
// Run: build/bin/test_simt -tc="autotune*"; on a GPU `warpnet bench train`
//   tunes matmul 10 at LeNet-5's sizes and records what won (kernels_tuned).
// Included by 10_autotuned.cu after 09_warptiling.cu, which brings
// sgemm_v8::stage_operands (kernel files have no include guard: each is
// included once, along its version's chain).
#pragma once
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"
#include "kernels/common/ptx.hpp"

namespace sgemm_small {

constexpr int BM = 32, BN = 32, BK = 64;  // the C tile, k per step
constexpr int THREADS = 256;              // 16 x 16 threads, a 2x2 of C each
constexpr int PAD = 4;                    // rows of 36 floats: stage_tile's transposing copies want 4 (mod 32)
static_assert(2 * BK * (BM + BN + 2 * PAD) * 4 <= 48 * 1024, "two stages fit in 48 KiB of static shared memory");

}  // namespace sgemm_small

// A: (M,K) row-major, or (K,M) when TA; B: (K,N) row-major, or (N,K) when TB;
// C: (M,N) row-major. C = op(A) @ op(B).
// Launch: block (256); grid (ceil(N/32), ceil(M/32)[, S]). With S = gridDim.z
// > 1, C is (S,M,N): block z sums only its slice of k, whole 64-steps from z
// * ceil(ceil(K/S)/64) * 64, into C[z] (sgemm_warptiling's split).
template <bool TA = false, bool TB = false>
__global__ void __launch_bounds__(sgemm_small::THREADS)
    sgemm_small_tile(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                     float* __restrict__ C) {
  using namespace sgemm_small;
  __shared__ __align__(16) float As[2][BK][BM + PAD];  // As[s][k][m] = op(A)[row0 + m, k0 + k]: stage s
  __shared__ __align__(16) float Bs[2][BK][BN + PAD];  // Bs[s][k][n] = op(B)[k0 + k, col0 + n]: stage s
  const int k_slice = ::warpnet::ceil_div(::warpnet::ceil_div(K, gridDim.z), BK) * BK;  // K when not split
  const int k_begin = blockIdx.z * k_slice, k_end = min(K, k_begin + k_slice);
  float* C_z = C + size_t(blockIdx.z) * M * N;

  const int t = threadIdx.x, ty = t / 16, tx = t % 16;  // C rows 2ty, 2ty+1 and columns 2tx, 2tx+1 of the tile
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const bool a_vec = TA && ::warpnet::float4_rows(A, M);
  const bool b_vec = !TB && ::warpnet::float4_rows(B, N);
  auto stage = [&](int s, int k0) {
    sgemm_v8::stage_operands<BK, BM, BN, PAD, THREADS, TA, TB>(&As[s][0][0], &Bs[s][0][0], A, B, M, N, K, row0, col0,
                                                                k0, t, a_vec, b_vec);
  };

  float acc[2][2] = {};  // acc[i][j]: C[row0 + 2ty + i, col0 + 2tx + j]
  const int steps = ::warpnet::ceil_div(k_end - k_begin, BK);  // <= 0 for a slice past K: C[z] = 0
  if (steps > 0) stage(0, k_begin);
  for (int step = 0; step < steps; ++step) {
    const int s = step % 2;
    warpnet::ptx::cp_async_wait<0>();  // this thread's copies into stage s have landed
    __syncthreads();                   // everyone's have; everyone is done with stage 1-s
    if (step + 1 < steps) stage(1 - s, k_begin + (step + 1) * BK);
    // A warp's 32 threads read 2 pairs of As (a broadcast each) and 16 of Bs,
    // consecutive: no bank conflicts.
#pragma unroll 8
    for (int k = 0; k < BK; ++k) {
      const float2 a = warpnet::load_float2(&As[s][k][2 * ty]);
      const float2 b = warpnet::load_float2(&Bs[s][k][2 * tx]);
      acc[0][0] += a.x * b.x, acc[0][1] += a.x * b.y;
      acc[1][0] += a.y * b.x, acc[1][1] += a.y * b.y;
    }
  }

  // Pairs of columns as one 8-byte store where the rows allow it; guarded scalars at the edges.
  const bool c_vec = warpnet::float2_rows(C_z, N);
  for (int i = 0; i < 2; ++i) {
    const int r = row0 + 2 * ty + i, c = col0 + 2 * tx;
    if (r >= M) break;
    if (c_vec && c + 1 < N) {
      warpnet::store_float2(&C_z[size_t(r) * N + c], acc[i][0], acc[i][1]);
    } else {
      for (int j = 0; j < 2; ++j)
        if (c + j < N) C_z[size_t(r) * N + c + j] = acc[i][j];
    }
  }
}
