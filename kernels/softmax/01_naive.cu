// Softmax v1 — naive: one thread computes one whole row, in three passes over
// global memory.
//
// Idea: the CPU loop, with the row loop handed to threads. Thread i walks row
//   i three times: its maximum m, then s = Σ exp(z - m), then writes
//   exp(z - m) / s. Subtracting m is not an optimization: exp(110) overflows
//   fp32, and every version here does it. What is wrong is the access
//   pattern: at step j the 32 lanes of a warp read z[i][j] for 32 different
//   rows i, C floats apart, so each 4-byte load of a lane is its own 32-byte
//   sector (8x the bytes asked for), and only N threads exist — a few rows
//   leave almost the whole GPU idle.
// Changed: first version.
// Measured: NVIDIA H200, 2026-11-30, run 2 (bench/results/nvidia-h200-2026-11-30-run2.json,
//   `warpnet bench softmax`; GB/s of the 8 bytes per element a softmax must move):
//   1.76 ms = 304 GB/s at 65536x1024, 7.18% of the in-run device-to-device copy bandwidth;
//   12.1 ms = 178 GB/s at 8192x32768, 4.24%.
//   Emulator: `warpnet trace softmax/01 --size 17,1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"

// Z: (N,C) row-major logits; P: (N,C) row-major probabilities.
// Launch: block (BLOCK); grid (ceil(N/BLOCK)): thread i owns row i.
template <int BLOCK>
__global__ void softmax_naive(int N, int C, const float* __restrict__ Z, float* __restrict__ P) {
  static_assert(BLOCK % 32 == 0, "whole warps");
  const int row = blockIdx.x * BLOCK + threadIdx.x;
  if (row >= N) return;
  const float* z = Z + size_t(row) * C;  // z: (C) this thread's row
  float* p = P + size_t(row) * C;         // p: (C)
  float m = -INFINITY;                    // pass 1: the maximum
  for (int j = 0; j < C; ++j) m = fmaxf(m, z[j]);
  float s = 0.0f;  // pass 2: the sum of exp(z - m); the largest term is exp(0) = 1
  for (int j = 0; j < C; ++j) s += expf(z[j] - m);
  const float inv = 1.0f / s;  // pass 3: normalize, reading z again and recomputing exp
  for (int j = 0; j < C; ++j) p[j] = expf(z[j] - m) * inv;
}
