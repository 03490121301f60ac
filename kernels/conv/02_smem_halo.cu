// Conv v2 — shared-memory tiles: a block stages the input tile its outputs
// need (with the halo the filter reaches past it) and the filters of KB
// output channels in shared memory, one input channel at a time.
//
// Idea: in v1 every x element is loaded by each of the R·S/stride² outputs
//   that cover it and again for each of the K output channels. Here a block
//   owns a TP x TQ tile of output pixels of one image for KB output channels.
//   Per input channel c it copies the input region under that tile — TP x TQ
//   pixels grown by the halo: ((TP−1)·stride + (R−1)·dil + 1) rows by
//   ((TQ−1)·stride + (S−1)·dil + 1) columns, zeros where it hangs over the
//   padding — and the KB x R x S filter slice into shared memory, then every
//   thread accumulates R·S·KB products from there. Global reads of x drop by
//   about R·S·KB/stride² (less the halo), and padding is no longer a branch in
//   the inner loop: the zeros were written once, at the copy.
// Changed from v1: a 2-D block of output pixels and a KB-channel group per
//   block (grid z = N · ceil(K/KB)); xs and ws in dynamic shared memory (their
//   sizes depend on R, S, stride and dilation at run time); two barriers per
//   input channel. The x reads from xs are stride apart along a warp, whose
//   two rows of 16 pixels are stride·IW floats apart: their banks overlap in
//   2 of 32 at stride 1 (3x3: IW = 18) and in all 16 at stride 2 (66 floats
//   apart), and a request costs its most-shared bank, so both are 2-way
//   bank conflicts (the trace shows 2.00-way at either stride).
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-cnn.json, `warpnet bench conv2d`),
//   N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14: 2.06 / 2.13 / 2.23 ms,
//   7.17 / 6.94 / 6.64 TFLOP/s, 11.0% / 9.14% / 10.8% of cuDNN (fp32, no TF32) in the same run.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace conv2d/02 --size 3,3,13,13,5,3,3,1,1,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"

// The haloed input tile a TP x TQ output tile reads, in 64 bits: a huge
// stride or dilation overflows int.
struct HaloWindow {
  long long rows, cols;
};
template <int TP, int TQ>
__host__ __device__ constexpr HaloWindow conv2d_smem_halo_window(int R, int S, int stride, int dil) {
  return {(TP - 1) * (long long)stride + (R - 1) * (long long)dil + 1,
          (TQ - 1) * (long long)stride + (S - 1) * (long long)dil + 1};
}

// Shared floats per block: the haloed input tile and the KB filter slices;
// past 2^40 (far beyond any block's shared memory) the answer is 2^40.
template <int TP, int TQ, int KB>
__host__ __device__ constexpr long long conv2d_smem_halo_floats(int R, int S, int stride, int dil) {
  const HaloWindow w = conv2d_smem_halo_window<TP, TQ>(R, S, stride, dil);
  constexpr long long kHuge = 1LL << 40;
  return w.rows > (1 << 20) || w.cols > (1 << 20) ? kHuge : w.rows * w.cols + (long long)KB * R * S;
}

// x: (N,C,H,W), w: (K,C,R,S), y: (N,K,P,Q), NCHW row-major (ConvShape).
// Launch: block (TQ, TP); grid (ceil(Q/TQ), ceil(P/TP), N·ceil(K/KB));
// dynamic shared conv2d_smem_halo_floats<TP,TQ,KB>(R,S,stride,dil)·4 bytes.
template <int TP, int TQ, int KB>
__global__ void __launch_bounds__(TP * TQ)
    conv2d_smem_halo(ConvShape g, const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y) {
  static_assert(TP * TQ <= 1024 && (TP * TQ) % 32 == 0, "one thread per output pixel of the tile, whole warps");
  static_assert(KB >= 1, "at least one output channel per block");
  constexpr int THREADS = TP * TQ;
  const int IH = (TP - 1) * g.stride + (g.R - 1) * g.dil + 1;  // rows of the haloed input tile
  const int IW = (TQ - 1) * g.stride + (g.S - 1) * g.dil + 1;  // its columns
  const int RS = g.R * g.S;
  float* xs = warpnet::dynamic_shared<float>();  // xs: (IH, IW) shared, input tile of channel c with halo, zero padded
  float* ws = xs + IH * IW;             // ws: (KB, R, S) shared, filters k0..k0+KB-1 at channel c

  const int kgroups = warpnet::ceil_div(g.K, KB);
  const int n = blockIdx.z / kgroups, k0 = (blockIdx.z % kgroups) * KB;
  const int tq = threadIdx.x, tp = threadIdx.y, t = tp * TQ + tq;
  const int p = blockIdx.y * TP + tp, q = blockIdx.x * TQ + tq;  // this thread's output pixel
  const int h0 = blockIdx.y * TP * g.stride - g.pad;             // input row of xs row 0
  const int w0 = blockIdx.x * TQ * g.stride - g.pad;             // input column of xs column 0

  float acc[KB] = {};  // y[n, k0 + kb, p, q] for kb < KB, in registers
  for (int c = 0; c < g.C; ++c) {
    const float* xc = x + (n * g.C + c) * g.H * g.W;  // (H,W) plane of image n, channel c
    // The whole block copies, row-major so that consecutive threads read
    // consecutive columns (coalesced); outside the image it writes zeros.
    for (int i = t; i < IH * IW; i += THREADS) {
      const int ih = h0 + i / IW, iw = w0 + i % IW;
      xs[i] = (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W) ? xc[ih * g.W + iw] : 0.0f;
    }
    for (int i = t; i < KB * RS; i += THREADS) {
      const int k = k0 + i / RS;
      ws[i] = k < g.K ? w[(k * g.C + c) * RS + i % RS] : 0.0f;  // past K: zeros, never stored
    }
    __syncthreads();  // the tiles are complete before anyone reads them
    // Threads past the edge of y compute too (on in-range shared data) and
    // only skip the store: no divergence around the barriers.
    for (int r = 0; r < g.R; ++r) {
      for (int s = 0; s < g.S; ++s) {
        const float xv = xs[(tp * g.stride + r * g.dil) * IW + tq * g.stride + s * g.dil];
        for (int kb = 0; kb < KB; ++kb) acc[kb] += xv * ws[kb * RS + r * g.S + s];  // ws: a broadcast
      }
    }
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }
  if (p >= g.P || q >= g.Q) return;
  for (int kb = 0; kb < KB && k0 + kb < g.K; ++kb) y[((n * g.K + k0 + kb) * g.P + p) * g.Q + q] = acc[kb];
}
