// Conv wgrad v1 — direct: one thread per element of dw, summing over the
// whole batch.
//
// Idea: dw[k,c,r,s] = sum over n, p, q of x[n, c, p·stride − pad + r·dil,
//   q·stride − pad + s·dil] · dy[n,k,p,q]: for each filter tap, the
//   correlation of the input with the output gradient. One thread owns one
//   dw element and walks all N·P·Q terms. Honest about its flaw: dw has only
//   K·C·R·S elements (36,864 for a 64->64 3x3 layer, barely enough threads to
//   fill a GPU) while each sum is N·P·Q long (200,704 at N=64, 56x56) — a
//   long serial reduction per thread. Splitting that sum over blocks (and
//   adding the partial sums) is what the next version has to do.
//   Consecutive threads own consecutive s: a warp's x reads are dil apart,
//   its dy reads mostly one address per k (broadcasts).
// Changed from: the first wgrad version.
// Measured: NVIDIA H200, 2026-11-30, run 3 (bench/results/nvidia-h200-2026-11-30-run3.json,
//   `warpnet bench conv2d_wgrad`), N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14:
//   15.0 / 6.66 / 5.80 ms, 0.984 / 2.22 / 2.55 TFLOP/s,
//   3.88% / 4.87% / 4.09% of cuDNN (fp32, no TF32) in the same run.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace conv2d_wgrad/01 --size 3,3,13,13,5,3,3,1,1,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"

// x: (N,C,H,W), dy: (N,K,P,Q), dw: (K,C,R,S), NCHW row-major (ConvShape).
// Launch: block (BLOCK); grid (ceil(K·C·R·S / BLOCK)).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    conv2d_wgrad_direct(ConvShape g, const float* __restrict__ x, const float* __restrict__ dy,
                        float* __restrict__ dw) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, at most 1024 threads");
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // dw's linear index: s fastest, then r, c, k
  if (i >= g.K * g.crs()) return;
  const int s = i % g.S, r = (i / g.S) % g.R, c = (i / (g.S * g.R)) % g.C, k = i / g.crs();
  float acc = 0.0f;
  for (int n = 0; n < g.N; ++n) {
    const float* xc = x + (n * g.C + c) * g.H * g.W;    // (H,W) plane of image n, channel c
    const float* dyk = dy + (n * g.K + k) * g.P * g.Q;  // (P,Q) plane of dy
    for (int p = 0; p < g.P; ++p) {
      const int ih = p * g.stride - g.pad + r * g.dil;
      if (ih < 0 || ih >= g.H) continue;  // tap r of row p is padding
      for (int q = 0; q < g.Q; ++q) {
        const int iw = q * g.stride - g.pad + s * g.dil;
        if (iw < 0 || iw >= g.W) continue;
        acc += xc[ih * g.W + iw] * dyk[p * g.Q + q];
      }
    }
  }
  dw[i] = acc;
}
