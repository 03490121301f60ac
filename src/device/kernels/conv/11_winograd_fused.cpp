#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/11_winograd_fused.cu"  // includes 10_winograd.cu, 09, 08 and 07
}  // namespace
#include "device/kernels/conv/winograd_fused_tiles.hpp"
#include "device/kernels/conv/winograd_gemm_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d/11_winograd_fused";
using conv_v11::kFused;

Launch launch_shape(int candidate, const Sizes& s) {
  return candidate < kFused ? fused_shape(shape_of(s)) : v10_shape(candidate - kFused, s);
}

// Candidate i launched; the caller checks the launches' errors.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  if (candidate >= kFused) return launch_v10(kId, candidate - kFused, s, l, b);
  const ConvShape g = shape_of(s);
  WN_CHECK(winograd::applies(g), kId, ": Winograd F(2x2,3x3) takes 3x3 filters at stride 1 and dilation 1, got ",
           describe_sizes(op("conv2d"), s));
  launch_fused_tile<false>(g, x_of(b), w_of(b), y_of(b));
}

double bytes_of(int candidate, const Sizes& s) {
  return candidate < kFused ? fused_bytes(shape_of(s)) : v10_bytes(candidate - kFused, s);
}

// The fused kernel where Winograd applies, then v10's: its two Winograd GEMM
// tiles and v9's candidates (winograd_fused_tiles.hpp, winograd_gemm_tiles.hpp
// and what it includes).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::forward,
    .count = conv_v11::kCandidates,
    .name = conv_v11::candidate_name,
    .table_choice = conv_v11::table_choice,
    .shape = launch_shape,
    .bytes = bytes_of,
    .launch = launch_candidate,
    .applies = conv_v11::candidate_applies,
    .winograd =
        [](int i) {
          return i < kFused || i - kFused < conv_v10::kWinograd ? WinogradTile::f2x2 : WinogradTile::none;
        },
};

const Registration winograd_fused{autotuned_kernel<kAutotuned>({
    .version = 11,
    .name = "winograd_fused",
    .shape_text = "3x3 filters at stride 1: v10's filter transform U = G w G^T, block (256), grid (ceil(K*C/256)); "
                  "then one kernel for the input transform, the 16 products and the output transform, block "
                  "(256), grid (ceil(T/32), ceil(K/32)), T = N*ceil(P/2)*ceil(Q/2), 36 KiB of shared memory; "
                  "v10's candidates after it; the choice measured by Kernel::tune on a GPU, else the fused "
                  "kernel where v10's table takes Winograd, v10's table elsewhere",
})};

}  // namespace
}  // namespace warpnet::device::conv
