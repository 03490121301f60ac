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

// The shape of the convolution with these sizes, P and Q computed: the
// filter spans dil·(R − 1) + 1 input pixels along an axis; 0 output pixels
// where it does not fit in the padded input.
inline ConvShape conv_shape(int N, int C, int H, int W, int K, int R, int S, int stride, int pad, int dil) {
  const auto out_size = [&](int in, int filter) {
    const long long span = in + 2LL * pad, extent = (long long)dil * (filter - 1) + 1;
    return span < extent ? 0 : int((span - extent) / stride + 1);
  };
  return ConvShape{N, C, H, W, K, R, S, stride, pad, dil, out_size(H, R), out_size(W, S)};
}
