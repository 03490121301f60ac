// Softmax v4 — online softmax: the maximum and the sum in one pass.
//
// Idea (Milakov & Gimelshein, "Online normalizer calculation for softmax",
//   2018): keep a running maximum m and a running sum s = Σ exp(z - m) for
//   the elements seen so far. A new element z either stays under m (s +=
//   exp(z - m)) or becomes the maximum, and then every earlier term was
//   scaled by the wrong exp(-m): multiply s by exp(m_old - z) and add
//   exp(0) = 1. One exp per element, and Z is read once for (m, s), once
//   more to write P: two reads instead of three, 12 bytes per element
//   instead of 16, on a kernel whose time is its bytes.
//   Each thread runs this over its columns; the block then takes the row's
//   maximum of the thread maxima and rescales each thread's s to it before
//   summing — the same two shuffle reductions as v3, now over registers
//   instead of each behind a pass over Z.
// Changed from v3: passes 1 and 2 fused into one online pass.
// Measured: NVIDIA H200, 2026-11-30, run 2 (bench/results/nvidia-h200-2026-11-30-run2.json,
//   `warpnet bench softmax`; GB/s of the 8 bytes per element a softmax must move):
//   0.188 ms = 2860 GB/s at 65536x1024, 67.4% of the in-run device-to-device copy bandwidth;
//   0.805 ms = 2670 GB/s at 8192x32768, 63.6%.
//   Emulator: `warpnet trace softmax/04 --size 17,1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/row_reduce.hpp"

// Z: (N,C) row-major logits; P: (N,C) row-major probabilities.
// Launch: block (BLOCK); grid (N): block i owns row i.
template <int BLOCK>
__global__ void softmax_online(int N, int C, const float* __restrict__ Z, float* __restrict__ P) {
  using warpnet::block_allreduce, warpnet::Max, warpnet::Sum;
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, every lane in the shuffles");
  __shared__ float partials[BLOCK / 32];        // partials: (BLOCK/32) one value per warp
  const float* z = Z + size_t(blockIdx.x) * C;  // z: (C) this block's row
  float* p = P + size_t(blockIdx.x) * C;        // p: (C)
  // Pass 1, online: (m, s) over this thread's columns. The first element
  // always takes the first branch (z > -inf) and s becomes 0 * exp(-inf) + 1 = 1.
  float m = Max::identity(), s = 0.0f;
  for (int j = threadIdx.x; j < C; j += BLOCK) {
    const float x = z[j];
    if (x > m) {
      s = s * expf(m - x) + 1.0f;  // rescale the old terms to the new maximum
      m = x;
    } else {
      s += expf(x - m);
    }
  }
  // The row's (m, s): rescale each thread's sum to the row maximum. A thread
  // with no column (C < BLOCK) has m = -inf and s = 0, and contributes 0
  // (exp(-inf - m_row) would be exp(nan) were the whole row -inf; it never is).
  const float m_row = block_allreduce<Max, BLOCK>(m, partials);
  const float s_row = block_allreduce<Sum, BLOCK>(m == -INFINITY ? 0.0f : s * expf(m - m_row), partials);
  const float inv = 1.0f / s_row;  // pass 2: normalize
  for (int j = threadIdx.x; j < C; j += BLOCK) p[j] = expf(z[j] - m_row) * inv;
}
