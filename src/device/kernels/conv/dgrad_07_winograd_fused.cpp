#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/dgrad_07_winograd_fused.cu"  // includes conv 11 and dgrad 06 (with what they include)
}  // namespace
#include "device/kernels/conv/dgrad_winograd_gemm_tiles.hpp"
#include "device/kernels/conv/winograd_fused_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_dgrad/07_winograd_fused";
using conv_dgrad_v07::kFused;

Launch launch_shape(int candidate, const Sizes& s) {
  if (candidate >= kFused) return dgrad_v06_shape(candidate - kFused, s);
  return fused_shape(conv_dgrad_v07::forward_view(shape_of(s)));
}

// Candidate i launched; the caller checks the launches' errors.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  if (candidate >= kFused) return launch_dgrad_v06(kId, candidate - kFused, s, l, b);
  const ConvShape g = shape_of(s);
  WN_CHECK(conv_dgrad_v07::applies(g), kId,
           ": Winograd F(2x2,3x3) takes 3x3 filters at stride 1, dilation 1 and padding <= 2, got ",
           describe_sizes(op("conv2d_dgrad"), s));
  // Buffers {dy, w, dx}: dy is the forward view's x, dx its y.
  launch_fused_tile<true>(conv_dgrad_v07::forward_view(g), static_cast<const float*>(b[0]),
                          static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
}

double bytes_of(int candidate, const Sizes& s) {
  if (candidate >= kFused) return dgrad_v06_bytes(candidate - kFused, s);
  return fused_bytes(conv_dgrad_v07::forward_view(shape_of(s)));
}

// The fused kernel where Winograd applies, then dgrad v6's: its two Winograd
// GEMM tiles and dgrad v5's candidates (winograd_fused_tiles.hpp,
// dgrad_winograd_gemm_tiles.hpp and what it includes).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::dgrad,
    .count = conv_dgrad_v07::kCandidates,
    .name = conv_dgrad_v07::candidate_name,
    .table_choice = conv_dgrad_v07::table_choice,
    .shape = launch_shape,
    .bytes = bytes_of,
    .launch = launch_candidate,
    .applies = conv_dgrad_v07::candidate_applies,
    .winograd =
        [](int i) {
          return i < kFused || i - kFused < conv_dgrad_v06::kWinograd ? WinogradTile::f2x2 : WinogradTile::none;
        },
};

const Registration winograd_fused{autotuned_kernel<kAutotuned>({
    .version = 7,
    .name = "winograd_fused",
    .shape_text = "3x3 filters at stride 1, pad <= 2: conv v11's fused Winograd on dy with the filters turned "
                  "(dgrad v6's forward view): the filter transform, grid (ceil(K*C/256)); the fused kernel, block "
                  "(256), grid (ceil(T/32), ceil(C/32)), T = N*ceil(H/2)*ceil(W/2); dgrad v6's candidates after "
                  "it; the choice measured by Kernel::tune on a GPU, else the fused kernel where dgrad v6's table "
                  "takes Winograd, dgrad v6's table elsewhere",
})};

}  // namespace
}  // namespace warpnet::device::conv
