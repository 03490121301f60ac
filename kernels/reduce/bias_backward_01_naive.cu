// Bias backward v1 — naive: one thread per channel, looping over N and S.
//
// Idea: y = x + b[c] broadcast over the batch and the spatial positions, so
//   db[c] = Σ_n Σ_s dy[n][c][s]: a sum of N·S terms per channel, a
//   reduction (this family's), not a stream (bias_add's, elementwise): C
//   outputs from N·C·S inputs, the whole cost is reading dy once. Thread c
//   walks its channel's N planes of S floats. Whether that is coalesced
//   depends on S: at each step the lanes of a warp read element s of planes
//   (n, c..c+31), which sit S floats apart.
//   - S = 1 (a linear layer's (N,C) gradient): the lanes read 32 adjacent
//     floats of row n, 4 sectors for 128 bytes: coalesced. Only C threads
//     exist, though, each summing N terms one after another: C = 10 classes
//     is a third of one warp on a GPU of thousands of lanes.
//   - S = H·W (a conv layer, S = 1024): every lane's 4-byte load is its own
//     32-byte sector, 8x the bytes asked for, and again only C threads.
// Changed: first version.
// Measured: not yet measured on a GPU. Emulator: `warpnet trace bias_add_backward/01 --size 8,64,49`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"

// dY: (N,C,S) fp32, S = H·W (1 for an (N,C) matrix); db: (C), db[c] = Σ over n, s of dY[n][c][s].
// Launch: block (BLOCK); grid (ceil(C/BLOCK)): thread c owns channel c.
template <int BLOCK>
__global__ void bias_backward_naive(int N, int C, int S, const float* __restrict__ dY, float* __restrict__ db) {
  static_assert(BLOCK % 32 == 0, "whole warps");
  const int c = blockIdx.x * BLOCK + threadIdx.x;
  if (c >= C) return;
  float acc = 0.0f;
  for (int n = 0; n < N; ++n) {
    const float* plane = dY + (size_t(n) * C + c) * S;  // plane: (S) channel c of image n
    for (int s = 0; s < S; ++s) acc += plane[s];
  }
  db[c] = acc;
}
