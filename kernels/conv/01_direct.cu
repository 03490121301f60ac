// Conv v1 — direct: one thread per output element, the definition's loops.
//
// Idea: y[n,k,p,q] is a sum over c, r, s of x at (p·stride − pad + r·dil,
//   q·stride − pad + s·dil) times w[k,c,r,s]. One thread owns one output and
//   walks those C·R·S taps, skipping the ones that fall in the padding.
//   Consecutive threads own consecutive q, so a warp's x reads are
//   consecutive addresses at stride 1 (every second one at stride 2) and its
//   w reads are one address (a broadcast: the warp shares k). Nothing is
//   reused on chip: each x element is read by every output that covers it
//   (R·S/stride² of them, for each of the K channels), each w element by all
//   N·P·Q outputs — the caches, not the kernel, keep that off DRAM.
// Changed from: the first version (the CPU's conv2d_direct, one thread per
//   iteration of its outer four loops).
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-cnn.json, `warpnet bench conv2d`),
//   N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14: 7.26 / 7.31 / 7.31 ms,
//   2.04 / 2.02 / 2.03 TFLOP/s, 3.13% / 2.67% / 3.31% of cuDNN (fp32, no TF32) in the same run.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace conv2d/01 --size 3,3,13,13,5,3,3,1,1,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"

// x: (N,C,H,W), w: (K,C,R,S), y: (N,K,P,Q), NCHW row-major (ConvShape).
// Launch: block (BLOCK); grid (ceil(N·K·P·Q / BLOCK)). Indices are int: up to
// 2^31 elements per tensor.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    conv2d_direct(ConvShape g, const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, at most 1024 threads");
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // y's linear index: q fastest, then p, k, n
  if (i >= g.N * g.K * g.P * g.Q) return;
  const int q = i % g.Q, p = (i / g.Q) % g.P, k = (i / (g.Q * g.P)) % g.K, n = i / (g.Q * g.P * g.K);
  const int h0 = p * g.stride - g.pad, w0 = q * g.stride - g.pad;  // the input pixel under tap (0,0)
  float acc = 0.0f;
  for (int c = 0; c < g.C; ++c) {
    const float* xc = x + (n * g.C + c) * g.H * g.W;  // (H,W) plane of image n, channel c
    const float* wc = w + (k * g.C + c) * g.R * g.S;  // (R,S) filter of output channel k, channel c
    for (int r = 0; r < g.R; ++r) {
      const int ih = h0 + r * g.dil;
      if (ih < 0 || ih >= g.H) continue;  // a padding row: zeros add nothing
      for (int s = 0; s < g.S; ++s) {
        const int iw = w0 + s * g.dil;
        if (iw < 0 || iw >= g.W) continue;
        acc += xc[ih * g.W + iw] * wc[r * g.S + s];
      }
    }
  }
  y[i] = acc;
}
