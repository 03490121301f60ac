// Conv v3 — im2col + GEMM: copy every receptive field into a column of a
// matrix, then hand the convolution to the best fp32 GEMM (matmul v9).
//
// Idea: for one image, y_n (K, P·Q) = W (K, C·R·S) @ col_n (C·R·S, P·Q),
//   where column (p,q) of col_n holds the C·R·S input values that output
//   pixel (p,q) sees (zeros for padding taps): the "image to columns"
//   rearrangement Caffe made famous. All the tiling, register blocking and
//   double buffering of the GEMM ladder then apply unchanged, and W is
//   already the row-major (K, C·R·S) matrix A. The price: col_n is R·S/stride²
//   times the size of the input image (9x for 3x3 stride 1), written to and
//   read back from global memory, and a workspace to hold it. The registration
//   runs im2col and the GEMM image by image, reusing one image's workspace
//   (C·R·S·P·Q floats): the GEMM writes y_n in place, NCHW, with no transpose.
//   With few output pixels per image (14x14 = 196) a GEMM has few blocks;
//   v4 removes both the buffer and the per-image launches.
// Changed from v2: the arithmetic is matmul v9 (sgemm_warptiling, included
//   whole); this file adds only im2col, one thread per element of col_n,
//   consecutive threads writing consecutive (p,q) (coalesced stores).
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-cnn.json, `warpnet bench conv2d`),
//   N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14: 6.10 / 10.7 / 20.5 ms,
//   2.42 / 1.38 / 0.720 TFLOP/s, 3.73% / 1.82% / 1.18% of cuDNN (fp32, no TF32) in the same run.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace conv2d/03 --size 3,3,13,13,5,3,3,1,1,1
//   (the trace shows both kernels, each summed over its N launches: im2col's and the GEMM's)
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"
#include "kernels/matmul/09_warptiling.cu"  // sgemm_warptiling: C (M,N) = A (M,K) @ B (K,N)

// x: (N,C,H,W) NCHW; col: (C·R·S, P·Q) row-major, the columns of image n:
//   col[(c·R + r)·S + s][p·Q + q] = x[n, c, p·stride − pad + r·dil, q·stride − pad + s·dil], 0 in the padding.
// Launch: block (BLOCK); grid (ceil(C·R·S·P·Q / BLOCK)).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    conv2d_im2col(ConvShape g, int n, const float* __restrict__ x, float* __restrict__ col) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, at most 1024 threads");
  const int PQ = g.P * g.Q;
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // col's linear index: (p,q) fastest
  if (i >= g.crs() * PQ) return;
  const int pq = i % PQ, crs = i / PQ;
  const int s = crs % g.S, r = (crs / g.S) % g.R, c = crs / (g.S * g.R);
  const int ih = (pq / g.Q) * g.stride - g.pad + r * g.dil, iw = (pq % g.Q) * g.stride - g.pad + s * g.dil;
  col[i] = (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W) ? x[((n * g.C + c) * g.H + ih) * g.W + iw] : 0.0f;
}
