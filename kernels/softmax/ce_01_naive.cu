// Softmax + cross-entropy v1 — naive: one thread per row, three passes.
//
// Idea: the loss of a row, −log softmax(z)[label], is never computed as the
//   log of a rounded probability: a probability of 1e-45 rounds to 0 (or a
//   denormal) and its log to −inf. With m = max z and s = Σ exp(z − m), the
//   log-sum-exp identity gives it exactly as
//     loss = log Σ exp(z) − z[label] = (m − z[label]) + log s,
//   where s lies in [1, C] (its largest term is exp(0) = 1), so log s is in
//   [0, log C] and nothing over- or underflows. m − z[label] comes first: in
//   a row shifted by ±100 both are near ±100 and their difference is exact
//   (Sterbenz), whereas (m + log s) − z[label] would round at the ulp of 100.
//   The probabilities, kept for the backward, are softmax v1's. Thread i
//   walks row i three times (max, sum, write), so the lanes of a warp read
//   32 different rows C floats apart: every 4-byte load is its own 32-byte
//   sector, and a small batch leaves the GPU idle (softmax/01's lesson).
// Changed: first version of the fused op; the softmax/01 loop plus one label
//   load and one logf per row.
// Precondition: labels in [0, C). A label outside it would read outside the
//   row, so the kernel writes a NaN loss for that row instead: the batch mean
//   turns NaN and the bad label is seen, never an out-of-bounds read.
// Measured: not yet measured on a GPU. Emulator: `warpnet trace softmax_cross_entropy/01 --size 17,1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"

// Z: (N,C) row-major logits; labels: (N) i32; loss: (N), loss[i] = −log P[i][labels[i]];
// P: (N,C) row-major probabilities.
// Launch: block (BLOCK); grid (ceil(N/BLOCK)): thread i owns row i.
template <int BLOCK>
__global__ void softmax_cross_entropy_naive(int N, int C, const float* __restrict__ Z, const int* __restrict__ labels,
                                            float* __restrict__ loss, float* __restrict__ P) {
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
  const int label = labels[row];
  loss[row] = label >= 0 && label < C ? (m - z[label]) + logf(s) : NAN;
}
