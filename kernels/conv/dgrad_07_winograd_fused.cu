// Conv dgrad v7 — the data gradient by conv v11's fused Winograd kernel, on
// dy with the filters turned, as dgrad v6 runs conv v10's; dgrad v6's
// candidates remain.
//
// Idea: dgrad v6's forward view (a 3x3 convolution of dy with the filters
//   transposed and turned by 180°, padded by 2 − pad, whose output is dx)
//   run by conv v11 instead of conv v10: v10's filter transform reading the
//   filters turned, then the one kernel that transforms dy's windows, sums
//   the products over K in shared memory and transforms dx's tiles back.
//   No new kernel; what changes from dgrad v6 is the bytes: the transformed
//   tiles of dy and dx never leave the SM.
// Applies: where dgrad v6's Winograd does (3x3, stride 1, dilation 1, pad <=
//   2). Elsewhere dgrad v6's candidates, after this one; on a GPU
//   Kernel::tune times every candidate that applies.
// The table's rule (no GPU): this kernel where dgrad v6's table takes
//   Winograd; else dgrad v6's table.
// Changed from dgrad v6: conv v11's fused kernel for conv v10's input
//   transform, 16 GEMMs and output transform.
// Trace (emulator, `warpnet trace conv2d_dgrad/07 --size 2,64,28,28,32,3,3,1,1,1`):
//   conv v11's figures at the forward view (2,32,28,28,64): global bytes
//   asked 3.80e6 (the registry's formula 3.92e6) against dgrad v6's 6.69e6.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-run2.json, `warpnet bench conv2d_dgrad`),
//   N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14: 0.369 / 0.286 / 0.266 ms,
//   40.1 / 51.8 / 55.6 TFLOP/s, 69.1% / 73.5% / 67.7% of cuDNN in the same run (its fastest fp32 algorithm by cudnnFind:
//   FFT or Winograd there).
// Run: build/bin/test_simt -tc="conv dgrad winograd*"; build/bin/warpnet trace conv2d_dgrad/07 --size 2,64,28,28,32,3,3,1,1,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/dgrad_06_winograd.cu"  // dgrad v6's candidates and forward view (it includes v5 ... v2)
#include "kernels/conv/winograd_fused.hpp"    // conv v11's fused kernel and its launch

namespace conv_dgrad_v07 {

using conv_dgrad_v06::applies;
using conv_dgrad_v06::forward_view;

// dx = dgrad(dy, w), on conv v11's workspace of forward_view(g).
inline void launch_fused(const ConvShape& g, const float* dy, const float* w, float* dx, float* workspace) {
  winograd::fused::launch<true>(forward_view(g), dy, w, dx, workspace);
}

// The fused kernel, then dgrad v6's candidates (its two Winograd GEMM tiles, dgrad v5's).
constexpr int kFused = 1;
constexpr int kCandidates = kFused + conv_dgrad_v06::kCandidates;

inline const char* candidate_name(int i) {
  return i < kFused ? winograd::fused::kName : conv_dgrad_v06::candidate_name(i - kFused);
}

// Whether candidate i can run this problem.
inline bool candidate_applies(int i, const ConvShape& g) {
  return i < kFused ? applies(g) : conv_dgrad_v06::candidate_applies(i - kFused, g);
}

// The tuning table: the fused kernel where dgrad v6's table takes Winograd; else dgrad v6's table.
inline int table_choice(const ConvShape& g) {
  const int v06 = conv_dgrad_v06::table_choice(g);
  return v06 < conv_dgrad_v06::kWinograd ? 0 : kFused + v06;
}

}  // namespace conv_dgrad_v07
