#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/10_winograd.cu"  // includes 09_implicit_gemm_pipelined.cu, 08 and 07
}  // namespace
#include "device/kernels/conv/pipelined_tiles.hpp"
#include "device/kernels/conv/winograd_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d/10_winograd";
using conv_v10::kWinograd;

Launch launch_shape(int candidate, const Sizes& s) {
  return candidate < kWinograd ? winograd_shape(candidate, shape_of(s)) : v09_shape(candidate - kWinograd, s);
}

// Candidate i launched; the caller checks the launches' errors.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  if (candidate >= kWinograd) return launch_v09(kId, candidate - kWinograd, s, l, b);
  const ConvShape g = shape_of(s);
  WN_CHECK(conv_v10::applies(g), kId, ": Winograd F(2x2,3x3) takes 3x3 filters at stride 1 and dilation 1, got ",
           describe_sizes(op("conv2d"), s));
  launch_winograd_tile<false>(kId, candidate, g, x_of(b), w_of(b), y_of(b));
}

double bytes_of(int candidate, const Sizes& s) {
  return candidate < kWinograd ? winograd_bytes(candidate, shape_of(s)) : v09_bytes(candidate - kWinograd, s);
}

// The two Winograd candidates where they apply, then v9's: its pipelined
// tiles, v8's direct kernel where it applies and v7's 7 GEMM tiles
// (winograd_tiles.hpp, pipelined_tiles.hpp, few_channels_tiles.hpp,
// conv_tiles.hpp).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::forward,
    .count = conv_v10::kCandidates,
    .name = conv_v10::candidate_name,
    .table_choice = conv_v10::table_choice,
    .shape = launch_shape,
    .bytes = bytes_of,
    .launch = launch_candidate,
    .applies = conv_v10::candidate_applies,
};

const Registration winograd{autotuned_kernel<kAutotuned>({
    .version = 10,
    .name = "winograd",
    .shape_text = "3x3 filters at stride 1: Winograd F(2x2,3x3): U = G w G^T, block (256), grid (ceil(K*C/256)); "
                  "V = B^T d B, grid (ceil(C*T/256)), T = N*ceil(P/2)*ceil(Q/2); 16 GEMMs M = U @ V, matmul v9's "
                  "128x128 (256 threads) or 64x128 (128), grid (ceil(T/BN), ceil(K/BM)); y = A^T M A, grid "
                  "(ceil(K*T/256)); v9's candidates after them; the choice measured by Kernel::tune on a GPU, "
                  "else Winograd where it applies with C, K >= 16, v9's table elsewhere",
})};

}  // namespace
}  // namespace warpnet::device::conv
