#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/12_winograd_4x4.cu"  // includes 11_winograd_fused.cu, 10, 09, 08 and 07
}  // namespace
#include "device/kernels/conv/winograd_4x4_tiles.hpp"
#include "device/kernels/conv/winograd_fused_tiles.hpp"
#include "device/kernels/conv/winograd_gemm_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d/12_winograd_4x4";
using conv_v12::kWinograd;
constexpr int kFirstV10 = kWinograd + conv_v11::kFused;  // v10's candidates from here on, v11's fused kernel before

Launch launch_shape(int candidate, const Sizes& s) {
  if (candidate >= kFirstV10) return v10_shape(candidate - kFirstV10, s);
  if (candidate >= kWinograd) return fused_shape(shape_of(s));
  return winograd_4x4_shape(candidate, shape_of(s));
}

double bytes_of(int candidate, const Sizes& s) {
  if (candidate >= kFirstV10) return v10_bytes(candidate - kFirstV10, s);
  if (candidate >= kWinograd) return fused_bytes(shape_of(s));
  return winograd_4x4_bytes(candidate, shape_of(s));
}

// Candidate i launched; the caller checks the launches' errors.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  if (candidate >= kFirstV10) return launch_v10(kId, candidate - kFirstV10, s, l, b);
  const ConvShape g = shape_of(s);
  WN_CHECK(winograd::applies(g), kId, ": Winograd takes 3x3 filters at stride 1 and dilation 1, got ",
           describe_sizes(op("conv2d"), s));
  if (candidate >= kWinograd) return launch_fused_tile<false>(g, x_of(b), w_of(b), y_of(b));
  launch_winograd_4x4_tile<false>(kId, candidate, g, x_of(b), w_of(b), y_of(b));
}

// Which arithmetic candidate i runs: F(4x4), then v11's fused F(2x2) and
// v10's two F(2x2) GEMM tiles, then v9's direct sums.
WinogradTile winograd_tile(int i) {
  if (i < kWinograd) return WinogradTile::f4x4;
  if (i < kFirstV10 + conv_v10::kWinograd) return WinogradTile::f2x2;
  return WinogradTile::none;
}

// The four F(4x4) candidates where Winograd applies (the chunked ones where
// the batch makes two chunks), then v11's: its fused
// kernel and v10's candidates (winograd_fused_tiles.hpp,
// winograd_gemm_tiles.hpp and what it includes).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::forward,
    .count = conv_v12::kCandidates,
    .name = conv_v12::candidate_name,
    .table_choice = conv_v12::table_choice,
    .shape = launch_shape,
    .bytes = bytes_of,
    .launch = launch_candidate,
    .applies = conv_v12::candidate_applies,
    .winograd = winograd_tile,
};

const Registration winograd_4x4{autotuned_kernel<kAutotuned>({
    .version = 12,
    .name = "winograd_4x4",
    .shape_text = "3x3 filters at stride 1: Winograd F(4x4,3x3): U = G w G^T, block (256), grid (ceil(K*C/256)); "
                  "V = B^T d B, grid (ceil(C*T/256)), T = N*ceil(P/4)*ceil(Q/4); 36 GEMMs M = U @ V in one launch, "
                  "matmul v9's 128x128 (256 threads) or 64x128 (128), grid (ceil(T/BN), ceil(K/BM), 36); "
                  "y = A^T M A, grid (ceil(K*T/256)); over the whole batch, or the last three per chunk of "
                  "images whose V and M fit 24 MiB of L2; v11's candidates after them; the choice measured by "
                  "Kernel::tune on a GPU, else F(4x4) where v10's table takes Winograd and F(4x4) multiplies "
                  "less than F(2x2), v11's table elsewhere",
})};

}  // namespace
}  // namespace warpnet::device::conv
