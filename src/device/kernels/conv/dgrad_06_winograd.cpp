#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/dgrad_06_winograd.cu"  // includes conv 10_winograd.cu and dgrad_05 (with what they include)
}  // namespace
#include "device/kernels/conv/dgrad_pipelined_tiles.hpp"
#include "device/kernels/conv/winograd_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_dgrad/06_winograd";
using conv_dgrad_v06::kWinograd;

Launch launch_shape(int candidate, const Sizes& s) {
  if (candidate >= kWinograd) return dgrad_v05_shape(candidate - kWinograd, s);
  return winograd_shape(candidate, conv_dgrad_v06::forward_view(shape_of(s)));
}

// Candidate i launched; the caller checks the launches' errors.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  if (candidate >= kWinograd) return launch_dgrad_v05(kId, candidate - kWinograd, s, l, b);
  const ConvShape g = shape_of(s);
  WN_CHECK(conv_dgrad_v06::applies(g), kId,
           ": Winograd F(2x2,3x3) takes 3x3 filters at stride 1, dilation 1 and padding <= 2, got ",
           describe_sizes(op("conv2d_dgrad"), s));
  // Buffers {dy, w, dx}: dy is the forward view's x, dx its y.
  launch_winograd_tile<true>(kId, candidate, conv_dgrad_v06::forward_view(g), static_cast<const float*>(b[0]),
                             static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
}

double bytes_of(int candidate, const Sizes& s) {
  if (candidate >= kWinograd) return dgrad_v05_bytes(candidate - kWinograd, s);
  return winograd_bytes(candidate, conv_dgrad_v06::forward_view(shape_of(s)));
}

// The two Winograd candidates where they apply, then dgrad v5's: its
// pipelined tiles at stride 1, dgrad v4's direct tiles where they apply and
// dgrad v3's 7 GEMM tiles (winograd_tiles.hpp, dgrad_pipelined_tiles.hpp,
// dgrad_few_channels_tiles.hpp, dgrad_tiles.hpp).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::dgrad,
    .count = conv_dgrad_v06::kCandidates,
    .name = conv_dgrad_v06::candidate_name,
    .table_choice = conv_dgrad_v06::table_choice,
    .shape = launch_shape,
    .bytes = bytes_of,
    .launch = launch_candidate,
    .applies = conv_dgrad_v06::candidate_applies,
};

const Registration winograd{autotuned_kernel<kAutotuned>({
    .version = 6,
    .name = "winograd",
    .shape_text = "3x3 filters at stride 1, pad <= 2: conv v10's Winograd F(2x2,3x3) on dy with the filters turned "
                  "(transposed, rotated 180 degrees, pad 2 - pad): U = G w' G^T, grid (ceil(K*C/256)); V = B^T dy B, "
                  "grid (ceil(K*T/256)), T = N*ceil(H/2)*ceil(W/2); 16 GEMMs M = U @ V at 128x128 (256 threads) or "
                  "64x128 (128), grid (ceil(T/BN), ceil(C/BM)); dx = A^T M A; dgrad v5's candidates after them; "
                  "the choice measured by Kernel::tune on a GPU, else Winograd where it applies with C, K >= 16, "
                  "dgrad v5's table elsewhere",
})};

}  // namespace
}  // namespace warpnet::device::conv
