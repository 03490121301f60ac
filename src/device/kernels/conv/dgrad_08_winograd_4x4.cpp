#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/dgrad_08_winograd_4x4.cu"  // includes conv 12 and dgrad 07 (with what they include)
}  // namespace
#include "device/kernels/conv/dgrad_winograd_gemm_tiles.hpp"
#include "device/kernels/conv/winograd_4x4_tiles.hpp"
#include "device/kernels/conv/winograd_fused_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_dgrad/08_winograd_4x4";
using conv_dgrad_v08::kWinograd;
// dgrad v6's candidates from here on, dgrad v7's fused kernel before.
constexpr int kFirstV06 = kWinograd + conv_dgrad_v07::kFused;

Launch launch_shape(int candidate, const Sizes& s) {
  if (candidate >= kFirstV06) return dgrad_v06_shape(candidate - kFirstV06, s);
  const ConvShape view = conv_dgrad_v08::forward_view(shape_of(s));
  return candidate >= kWinograd ? fused_shape(view) : winograd_4x4_shape(candidate, view);
}

double bytes_of(int candidate, const Sizes& s) {
  if (candidate >= kFirstV06) return dgrad_v06_bytes(candidate - kFirstV06, s);
  const ConvShape view = conv_dgrad_v08::forward_view(shape_of(s));
  return candidate >= kWinograd ? fused_bytes(view) : winograd_4x4_bytes(candidate, view);
}

// Candidate i launched; the caller checks the launches' errors.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  if (candidate >= kFirstV06) return launch_dgrad_v06(kId, candidate - kFirstV06, s, l, b);
  const ConvShape g = shape_of(s);
  WN_CHECK(conv_dgrad_v08::applies(g), kId,
           ": Winograd takes 3x3 filters at stride 1, dilation 1 and padding <= 2, got ",
           describe_sizes(op("conv2d_dgrad"), s));
  // Buffers {dy, w, dx}: dy is the forward view's x, dx its y.
  const ConvShape view = conv_dgrad_v08::forward_view(g);
  const auto* dy = static_cast<const float*>(b[0]);
  const auto* w = static_cast<const float*>(b[1]);
  auto* dx = static_cast<float*>(b[2]);
  if (candidate >= kWinograd) return launch_fused_tile<true>(view, dy, w, dx);
  launch_winograd_4x4_tile<true>(kId, candidate, view, dy, w, dx);
}

// Which arithmetic candidate i runs: F(4x4), then dgrad v7's fused F(2x2)
// and dgrad v6's two F(2x2) GEMM tiles, then dgrad v5's direct sums.
WinogradTile winograd_tile(int i) {
  if (i < kWinograd) return WinogradTile::f4x4;
  if (i < kFirstV06 + conv_dgrad_v06::kWinograd) return WinogradTile::f2x2;
  return WinogradTile::none;
}

// The four F(4x4) candidates where Winograd applies (the chunked ones where
// the batch makes two chunks), then dgrad v7's: its
// fused kernel and dgrad v6's candidates (winograd_4x4_tiles.hpp,
// winograd_fused_tiles.hpp, dgrad_winograd_gemm_tiles.hpp and what it
// includes).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::dgrad,
    .count = conv_dgrad_v08::kCandidates,
    .name = conv_dgrad_v08::candidate_name,
    .table_choice = conv_dgrad_v08::table_choice,
    .shape = launch_shape,
    .bytes = bytes_of,
    .launch = launch_candidate,
    .applies = conv_dgrad_v08::candidate_applies,
    .winograd = winograd_tile,
};

const Registration winograd_4x4{autotuned_kernel<kAutotuned>({
    .version = 8,
    .name = "winograd_4x4",
    .shape_text = "3x3 filters at stride 1, pad <= 2: conv v12's Winograd F(4x4,3x3) on dy with the filters turned "
                  "(dgrad v6's forward view): U = G w' G^T, grid (ceil(K*C/256)); V = B^T dy B, grid "
                  "(ceil(K*T/256)), T = N*ceil(H/4)*ceil(W/4); 36 GEMMs M = U @ V in one launch at 128x128 "
                  "(256 threads) or 64x128 (128), grid (ceil(T/BN), ceil(C/BM), 36); dx = A^T M A; over the whole "
                  "batch or in chunks of images whose V and M fit 24 MiB of L2; dgrad v7's "
                  "candidates after them; the choice measured by Kernel::tune on a GPU, else F(4x4) where "
                  "conv v12's table takes it at the forward view, dgrad v7's table elsewhere",
})};

}  // namespace
}  // namespace warpnet::device::conv
