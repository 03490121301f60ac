// Softmax + cross-entropy v2 — a warp per row, online max and sum, shuffles.
//
// Idea: two lessons of the softmax ladder at once. A row gets a warp: lane l
//   takes columns l, l + 32, l + 64, ..., so each load instruction of the
//   warp reads 32 consecutive floats, 128 bytes in 4 sectors (softmax/02's
//   coalescing), and N rows are N warps, not N threads. Each lane keeps a
//   running maximum m and sum s = Σ exp(z − m) over its columns in one pass
//   (softmax/04's online normalizer: a new maximum rescales s by
//   exp(m_old − m_new)); the 32 lanes then merge their (m, s) pairs with
//   butterfly shuffles (warp_allreduce, kernels/common/row_reduce.hpp): no
//   shared memory and no barrier, since a warp needs neither. The loss is
//   v1's (m − z[label]) + log s, written by lane 0.
// Changed from v1: a warp per row instead of a thread; one online pass for
//   (m, s) instead of two, so Z is read twice instead of three times (12
//   bytes per element instead of 16 with the write of P); shuffle merges.
// Cost left: a warp per row idles lanes when C < 32 (C = 10 classes: 22 of
//   32), one float per load instruction (softmax/05 packs several short rows
//   per warp and loads float4s), and a long row (a 32k vocabulary) is walked
//   by 32 lanes only, where softmax/04 gives it a block.
// Precondition: labels in [0, C); outside it the row's loss is NaN (as v1).
// Measured: not benchmarked alone on a GPU; its launches in LeNet-5's training
//   step on an H200 are profiled in bench/results/logs/ncu-lenet5-nvidia-h200-2026-12-04-run2.csv
//   (Nsight Compute, 2026-12-04). Emulator: `warpnet trace softmax_cross_entropy/02 --size 17,1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/row_reduce.hpp"

// Z: (N,C) row-major logits; labels: (N) i32; loss: (N); P: (N,C) row-major probabilities.
// Launch: block (BLOCK); grid (ceil(N / (BLOCK/32))): warp w of block b owns
// row b·(BLOCK/32) + w.
template <int BLOCK>
__global__ void softmax_cross_entropy_warp_online(int N, int C, const float* __restrict__ Z,
                                                  const int* __restrict__ labels, float* __restrict__ loss,
                                                  float* __restrict__ P) {
  using warpnet::warp_allreduce, warpnet::Max, warpnet::Sum;
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps: every lane of a row's warp shuffles");
  const int row = blockIdx.x * (BLOCK / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  // The whole warp leaves together (row is the same for its 32 lanes), so no
  // shuffle below ever names a lane that has exited.
  if (row >= N) return;
  const float* z = Z + size_t(row) * C;  // z: (C) this warp's row
  float* p = P + size_t(row) * C;         // p: (C)
  // Pass 1, online over this lane's columns. The first element always takes
  // the first branch (z > -inf) and s becomes 0 * exp(-inf) + 1 = 1.
  float m = Max::identity(), s = 0.0f;
  for (int j = lane; j < C; j += 32) {
    const float x = z[j];
    if (x > m) {
      s = s * expf(m - x) + 1.0f;  // rescale the old terms to the new maximum
      m = x;
    } else {
      s += expf(x - m);
    }
  }
  // The row's (m, s): every lane rescales its sum to the row maximum. A lane
  // with no column (C < 32) has m = -inf and s = 0 and adds 0 (exp(-inf -
  // m_row) would be exp(nan) were the whole row -inf; a logit never is).
  const float m_row = warp_allreduce<Max>(m);
  const float s_row = warp_allreduce<Sum>(m == -INFINITY ? 0.0f : s * expf(m - m_row));
  const float inv = 1.0f / s_row;  // pass 2: normalize, coalesced as pass 1
  for (int j = lane; j < C; j += 32) p[j] = expf(z[j] - m_row) * inv;
  if (lane == 0) {
    const int label = labels[row];
    loss[row] = label >= 0 && label < C ? (m_row - z[label]) + logf(s_row) : NAN;
  }
}
