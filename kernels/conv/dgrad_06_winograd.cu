// Conv dgrad v6 — the data gradient by Winograd F(2x2, 3x3): conv v10's
// kernels, run on dy with the filters turned; dgrad v5's candidates remain
// for the layers it does not fit.
//
// Idea: at stride 1 and dilation 1 the data gradient of a 3x3 convolution
//   is itself a 3x3 convolution of dy:
//     dx[n, c, h, w] = Σ_k Σ_r,s dy[n, k, h + pad − r, w + pad − s] · w[k, c, r, s]
//                    = Σ_k Σ_r,s dy[n, k, h − pad' + r, w − pad' + s] · w[k, c, 2 − r, 2 − s],
//   pad' = 2 − pad: a forward convolution with K input channels, C output
//   channels and the filters transposed (k and c swapped) and turned by 180°,
//   whose output is H x W again. So conv v10's four steps serve unchanged:
//   its filter transform reads the filters turned in place (TURNED: no copy
//   of w), and the input transform, the 16 GEMMs and the output transform
//   see dy as x and dx as y (forward_view below). The GEMMs' products drop
//   from K·C·9 to K·C·4 per output pixel, as in the forward.
// Applies: 3x3 filters, stride 1, dilation 1, pad <= 2 (pad' >= 0; ResNet's
//   layers have pad 1). Elsewhere dgrad v5's candidates, after the two
//   Winograd ones; on a GPU Kernel::tune times every candidate that applies.
// The table's rule (no GPU): Winograd where it applies with C and K at least
//   16, the GEMM tile (over C here) wasting fewer rows; else dgrad v5's table.
// Changed from dgrad v5: the arithmetic: conv v10's 16 GEMMs on transformed
//   tiles of dy instead of the implicit GEMM on dy's taps.
// Trace (emulator, `warpnet trace conv2d_dgrad/06 --size
//   2,64,28,28,32,3,3,1,1,1`, the table's 64x128 GEMM tile over C = 64): the
//   figures of conv v10's trace at its forward view (2,32,28,28,64: global
//   bytes asked 6.69e6, the registry's formula 6.75e6; every kernel's
//   efficiency the same), the filter transform reading turned filters with
//   the same 12.5% efficiency. Worst element 0.59% of its Winograd bound
//   (conv v10's at the forward view: src/device/kernels/conv/
//   winograd_bound.hpp) from the CPU reference; 0.37% of the direct sum's,
//   the conv2d_dgrad tolerance (dgrad v5's choice there, v3's tile: 0.67%).
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-run2.json, `warpnet bench conv2d_dgrad`),
//   N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14: 0.368 / 0.286 / 0.267 ms,
//   40.2 / 51.8 / 55.4 TFLOP/s, 69.2% / 73.6% / 67.6% of cuDNN in the same run (its fastest fp32 algorithm by cudnnFind:
//   FFT or Winograd there).
// Run: build/bin/test_simt -tc="conv dgrad winograd*"; build/bin/warpnet trace conv2d_dgrad/06 --size 2,64,28,28,32,3,3,1,1,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/10_winograd.cu"                      // conv v10's kernels and launch
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/dgrad_05_implicit_gemm_pipelined.cu"  // dgrad v5's candidates (it includes v4, v3, v2)

namespace conv_dgrad_v06 {

inline bool applies(const ConvShape& g) { return winograd::applies(g) && g.pad <= 2; }

// The forward convolution whose output is dx (see above): x = dy (N, K, P, Q),
// filters (C, K, 3, 3) (w turned), pad 2 − pad.
inline ConvShape forward_view(const ConvShape& g) { return conv_shape(g.N, g.K, g.P, g.Q, g.C, 3, 3, 1, 2 - g.pad, 1); }

// dx = dgrad(dy, w) with GEMM tile i, on conv v10's workspace of forward_view(g).
inline void launch_winograd(int i, const ConvShape& g, const float* dy, const float* w, float* dx, float* workspace) {
  conv_v10::launch_winograd<true>(i, forward_view(g), dy, w, dx, workspace);
}

// The Winograd candidates, then dgrad v5's (its pipelined tiles, dgrad v4's direct kernel, v3's tiles).
constexpr int kWinograd = conv_v10::kWinograd;
constexpr int kCandidates = kWinograd + conv_dgrad_v05::kCandidates;

inline const char* candidate_name(int i) {
  return i < kWinograd ? conv_v10::candidate_name(i) : conv_dgrad_v05::candidate_name(i - kWinograd);
}

// Whether candidate i can run this problem.
inline bool candidate_applies(int i, const ConvShape& g) {
  return i < kWinograd ? applies(g) : conv_dgrad_v05::candidate_applies(i - kWinograd, g);
}

// The tuning table: conv v10's rule on the forward view (Winograd with C, K
// >= 16) where Winograd applies; else dgrad v5's table.
inline int table_choice(const ConvShape& g) {
  if (applies(g)) {
    const int choice = conv_v10::table_choice(forward_view(g));
    if (choice < kWinograd) return choice;
  }
  return kWinograd + conv_dgrad_v05::table_choice(g);
}

}  // namespace conv_dgrad_v06
