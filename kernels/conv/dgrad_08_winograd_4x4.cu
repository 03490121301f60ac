// Conv dgrad v8 — the data gradient by Winograd F(4x4, 3x3): conv v12's
// kernels on dy with the filters turned, as dgrad v6 runs conv v10's;
// dgrad v7's candidates remain.
//
// Idea: dgrad v6's header: at stride 1 and dilation 1 the data gradient of
//   a 3x3 convolution is a forward 3x3 convolution of dy by the filters
//   transposed and turned by 180°, padded by 2 − pad (forward_view). Any
//   forward method then computes it, and conv v12's F(4x4, 3x3) does with
//   2.25 products per output and channel where dgrad v6's F(2x2) needs 4:
//   its filter transform reads the filters turned in place (TURNED), and
//   its input transform, 36 GEMMs and output transform see dy as x and dx
//   as y. Its accuracy is conv v12's at the forward view: the F(4x4) bound
//   (src/device/kernels/conv/winograd_bound.hpp), C + 18 roundings.
// Applies: 3x3 filters, stride 1, dilation 1, pad <= 2 (dgrad v6's rule);
//   conv v12's chunked candidates where the batch makes two chunks or more.
//   Elsewhere dgrad v7's candidates, after the four F(4x4) ones; on a GPU
//   Kernel::tune times every candidate that applies.
// The table's rule (no GPU): conv v12's at the forward view: F(4x4) where
//   dgrad v6's table takes Winograd and F(4x4)'s GEMMs multiply less than
//   F(2x2)'s at the planes of dx; else dgrad v7's table.
// Changed from dgrad v7: conv v12's four F(4x4) candidates (two GEMM
//   tiles, over the whole batch and in L2-sized chunks) ahead of v7's fused
//   F(2x2) kernel and dgrad v6's two F(2x2) GEMM tiles.
// Trace (emulator, `warpnet trace conv2d_dgrad/08 --size
//   2,64,14,14,32,3,3,1,1,1`, lesson 05's layer with C and K swapped, so its
//   forward view is conv v12's trace: 32 channels of dy in, 64 of dx out):
//   global bytes asked 1.75e6 against dgrad v6's 1.83e6, the worst element
//   0.20% of its F(4x4) bound from the CPU reference (dgrad v6: 0.51% of a
//   bound about 13 times smaller).
// Measured: not yet on a GPU (written 2026-12-05 on a machine without one).
// Run: build/bin/test_simt -tc="conv dgrad winograd 4x4*"; build/bin/warpnet trace conv2d_dgrad/08 --size 2,64,14,14,32,3,3,1,1,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/dgrad_07_winograd_fused.cu"  // dgrad v7's candidates (it includes v6 ... v2)
#include "kernels/conv/winograd_4x4.hpp"            // conv v12's F(4x4) kernels and launch

namespace conv_dgrad_v08 {

using conv_dgrad_v06::applies;
using conv_dgrad_v06::forward_view;

// dx = dgrad(dy, w) by F(4x4) candidate i (winograd_4x4.hpp) in chunks of
// `chunk` images, on conv v12's workspace of forward_view(g) for them.
inline void launch_winograd(int i, int chunk, const ConvShape& g, const float* dy, const float* w, float* dx,
                            float* workspace) {
  winograd::f4x4::launch_winograd<true>(winograd::f4x4::gemm_tile(i), chunk, forward_view(g), dy, w, dx, workspace);
}

// The four F(4x4) candidates, then dgrad v7's (its fused kernel, dgrad v6's, dgrad v5's ...).
constexpr int kWinograd = winograd::f4x4::kCandidates;
constexpr int kCandidates = kWinograd + conv_dgrad_v07::kCandidates;

inline const char* candidate_name(int i) {
  return i < kWinograd ? winograd::f4x4::candidate_name(i) : conv_dgrad_v07::candidate_name(i - kWinograd);
}

// Whether candidate i can run this problem (a chunked one only where the
// batch makes two chunks or more).
inline bool candidate_applies(int i, const ConvShape& g) {
  if (i < kWinograd) return applies(g) && winograd::f4x4::candidate_differs(i, forward_view(g));
  return conv_dgrad_v07::candidate_applies(i - kWinograd, g);
}

// The tuning table: conv v12's rule on the forward view — F(4x4) over the
// whole batch where dgrad v6's table takes Winograd (conv v10's rule on that view) and F(4x4)
// multiplies less, at dgrad v6's GEMM tile; else dgrad v7's table.
inline int table_choice(const ConvShape& g) {
  const int v06 = conv_dgrad_v06::table_choice(g);
  if (v06 < conv_dgrad_v06::kWinograd && winograd::f4x4::fewer_products_than_2x2(forward_view(g))) return v06;
  return kWinograd + conv_dgrad_v07::table_choice(g);
}

}  // namespace conv_dgrad_v08
