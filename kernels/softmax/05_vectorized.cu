// Softmax v5 — several rows per warp, float4 loads and stores.
//
// Idea: a block per row wastes most of its threads on short rows (C = 10
//   classes: 246 of 256 threads idle) and v4 moves one float per instruction.
//   Here a row gets a group of G lanes, G = the smallest power of two that
//   covers C/4, at most 32: 32/G rows per warp, BLOCK/G rows per block. Each
//   lane moves 4 consecutive floats per instruction (a float4, 16 bytes), so
//   a warp asks for 512 bytes at a time instead of 128. The group reduces
//   with shuffles of width G alone (warp_allreduce<Op, G>): no shared memory
//   and no barrier at all.
// Changed from v4: G lanes per row instead of a block; float4 accesses; the
//   online pass folds a whole float4 in at once (one rescale per 4 elements).
//   The same 12 bytes per element as v4, in a quarter of the instructions.
// What falls back to 4-byte accesses: a float4 must be 16-byte aligned, so
//   when C % 4 != 0 (or a pointer is not 16-byte aligned) rows start at odd
//   addresses (kernels/common/float4_rows.hpp decides, once per launch) and
//   the kernel runs v4's scalar loops on its G lanes, consecutive lanes on
//   consecutive floats: coalesced, 4x the instructions.
// Measured: NVIDIA H200, 2026-11-30, run 2 (bench/results/nvidia-h200-2026-11-30-run2.json,
//   `warpnet bench softmax`; GB/s of the 8 bytes per element a softmax must move):
//   0.182 ms = 2950 GB/s at 65536x1024, 69.6% of the in-run device-to-device copy bandwidth;
//   0.818 ms = 2630 GB/s at 8192x32768, 62.6%.
//   Emulator: `warpnet trace softmax/05 --size 17,1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"
#include "kernels/common/row_reduce.hpp"

// Z: (N,C) row-major logits; P: (N,C) row-major probabilities.
// Launch: block (BLOCK); grid (ceil(N / (BLOCK/G))): lanes g*G .. g*G+G-1 of
// the block own row blockIdx.x * (BLOCK/G) + g.
template <int BLOCK, int G>
__global__ void softmax_vectorized(int N, int C, const float* __restrict__ Z, float* __restrict__ P) {
  using warpnet::float4_rows, warpnet::load_float4, warpnet::store_float4, warpnet::warp_allreduce, warpnet::Max,
      warpnet::Sum;
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, every lane in the shuffles");
  static_assert(G >= 1 && G <= 32 && (G & (G - 1)) == 0, "groups tile a warp");
  const int row = blockIdx.x * (BLOCK / G) + threadIdx.x / G;
  const int lane = threadIdx.x % G;  // this lane's place in its row's group
  const bool vector = float4_rows(Z, C) && float4_rows(P, C);
  // Rows past N: their lanes load nothing but stay for the shuffles.
  const int cols = row < N ? C : 0;
  float m = Max::identity(), s = 0.0f;
  if (vector) {
    // Pass 1, online over float4s: lanes of a group take consecutive float4s,
    // G·16 contiguous bytes per group and step; one rescale per 4 elements,
    // without v4's branch (m starts at -inf: expf(-inf) * 0 = 0).
    for (int c = 4 * lane; c < cols; c += 4 * G) {
      const float4 v = load_float4(Z + size_t(row) * C + c);  // v: z[row][c .. c+3]
      const float m_new = fmaxf(fmaxf(m, v.x), fmaxf(fmaxf(v.y, v.z), v.w));
      s = s * expf(m - m_new) + expf(v.x - m_new) + expf(v.y - m_new) + expf(v.z - m_new) + expf(v.w - m_new);
      m = m_new;
    }
  } else {
    // The scalar fallback, coalesced: lanes of a group take consecutive
    // floats (a float4-style j = 4·lane stride would spread one 4-byte load
    // of a warp over 4x the sectors).
    for (int j = lane; j < cols; j += G) {
      const float x = Z[size_t(row) * C + j], m_new = fmaxf(m, x);
      s = s * expf(m - m_new) + expf(x - m_new);
      m = m_new;
    }
  }
  // The row's (m, s) from its G lanes. A lane with no column has m = -inf, s = 0.
  const float m_row = warp_allreduce<Max, G>(m);
  const float s_row = warp_allreduce<Sum, G>(m == -INFINITY ? 0.0f : s * expf(m - m_row));
  const float inv = 1.0f / s_row;  // pass 2: normalize
  if (vector) {
    for (int c = 4 * lane; c < cols; c += 4 * G) {
      const float4 v = load_float4(Z + size_t(row) * C + c);
      store_float4(P + size_t(row) * C + c, make_float4(expf(v.x - m_row) * inv, expf(v.y - m_row) * inv,
                                                        expf(v.z - m_row) * inv, expf(v.w - m_row) * inv));
    }
  } else {
    for (int j = lane; j < cols; j += G) P[size_t(row) * C + j] = expf(Z[size_t(row) * C + j] - m_row) * inv;
  }
}
