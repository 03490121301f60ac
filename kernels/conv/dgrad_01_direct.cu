// Conv dgrad v1 — direct: one thread per element of dx, the backward of the
// forward's loops turned around.
//
// Idea: x[n,c,h,w] fed output (p,q) through tap (r,s) when
//   h = p·stride − pad + r·dil and w = q·stride − pad + s·dil, so
//   dx[n,c,h,w] = sum over k, r, s of dy[n,k,p,q] · w[k,c,r,s] for the (r,s)
//   whose p = (h + pad − r·dil)/stride is a whole number inside [0,P) (q alike).
//   Each thread owns one dx element and gathers those terms: no two threads
//   write the same place, so no atomics (the scatter form — each dy element
//   adding into R·S places of dx — would need them). At stride 2 three taps in
//   four are skipped by the divisibility test: the branch is the lesson.
// Changed from: the first dgrad version (conv v1's layout: consecutive
//   threads own consecutive w, reading dy at consecutive q at stride 1).
// Measured: NVIDIA H200, 2026-11-30, run 3 (bench/results/nvidia-h200-2026-11-30-run3.json,
//   `warpnet bench conv2d_dgrad`), N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14:
//   20.3 / 20.5 / 20.7 ms, 0.729 / 0.721 / 0.714 TFLOP/s,
//   1.18% / 0.913% / 1.31% of cuDNN (fp32, no TF32) in the same run.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace conv2d_dgrad/01 --size 3,3,13,13,5,3,3,2,1,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"

// dy: (N,K,P,Q), w: (K,C,R,S), dx: (N,C,H,W), NCHW row-major (ConvShape).
// Launch: block (BLOCK); grid (ceil(N·C·H·W / BLOCK)).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    conv2d_dgrad_direct(ConvShape g, const float* __restrict__ dy, const float* __restrict__ w,
                        float* __restrict__ dx) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, at most 1024 threads");
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // dx's linear index: w fastest, then h, c, n
  if (i >= g.N * g.C * g.H * g.W) return;
  const int iw = i % g.W, ih = (i / g.W) % g.H, c = (i / (g.W * g.H)) % g.C, n = i / (g.W * g.H * g.C);
  float acc = 0.0f;
  for (int k = 0; k < g.K; ++k) {
    const float* dyk = dy + (n * g.K + k) * g.P * g.Q;  // (P,Q) plane of dy
    const float* wk = w + (k * g.C + c) * g.R * g.S;    // (R,S) filter k at channel c
    for (int r = 0; r < g.R; ++r) {
      const int ph = ih + g.pad - r * g.dil;  // p·stride, if tap r reached this row
      if (ph < 0 || ph % g.stride != 0 || ph / g.stride >= g.P) continue;
      for (int s = 0; s < g.S; ++s) {
        const int qw = iw + g.pad - s * g.dil;
        if (qw < 0 || qw % g.stride != 0 || qw / g.stride >= g.Q) continue;
        acc += dyk[(ph / g.stride) * g.Q + qw / g.stride] * wk[r * g.S + s];
      }
    }
  }
  dx[i] = acc;
}
