// The geometry every conv kernel reads, passed by value as one kernel argument:
// x (N,C,H,W), w (K,C,R,S), y (N,K,P,Q), all NCHW row-major, with a square
// stride, padding and dilation. Output pixel (p,q) with filter tap (r,s) reads
// input pixel (p·stride − pad + r·dil, q·stride − pad + s·dil); outside the
// image that is zero padding.
#pragma once
#include "kernels/common/cuda_compat.hpp"

struct ConvShape {
  int N, C, H, W;     // x: (N,C,H,W)
  int K, R, S;        // w: (K,C,R,S)
  int stride, pad, dil;
  int P, Q;           // y: (N,K,P,Q)
  // The GEMM view of the convolution (implicit GEMM, im2col): rows are output
  // pixels of every image, columns output channels, the reduction the taps.
  __host__ __device__ int gemm_m() const { return N * P * Q; }
  __host__ __device__ int crs() const { return C * R * S; }
};
