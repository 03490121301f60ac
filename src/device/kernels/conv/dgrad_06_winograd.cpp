#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/dgrad_06_winograd.cu"  // includes conv 10_winograd.cu and dgrad_05 (with what they include)
}  // namespace
#include "device/kernels/conv/dgrad_winograd_gemm_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_dgrad/06_winograd";

// The two Winograd candidates where they apply, then dgrad v5's: its
// pipelined tiles at stride 1, dgrad v4's direct tiles where they apply and
// dgrad v3's 7 GEMM tiles (dgrad_winograd_gemm_tiles.hpp and what it
// includes).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::dgrad,
    .count = conv_dgrad_v06::kCandidates,
    .name = conv_dgrad_v06::candidate_name,
    .table_choice = conv_dgrad_v06::table_choice,
    .shape = dgrad_v06_shape,
    .bytes = dgrad_v06_bytes,
    .launch = [](int i, const Sizes& s, const Launch& l, Buffers b) { launch_dgrad_v06(kId, i, s, l, b); },
    .applies = conv_dgrad_v06::candidate_applies,
    .winograd = [](int i) { return i < conv_dgrad_v06::kWinograd ? WinogradTile::f2x2 : WinogradTile::none; },
};

const Registration winograd{autotuned_kernel<kAutotuned>({
    .version = 6,
    .name = "winograd",
    .shape_text = "3x3 filters at stride 1, pad <= 2: conv v10's Winograd F(2x2,3x3) on dy with the filters turned "
                  "(transposed, rotated 180 degrees, pad 2 - pad): U = G w' G^T, grid (ceil(K*C/256)); V = B^T dy B, "
                  "grid (ceil(K*T/256)), T = N*ceil(H/2)*ceil(W/2); 16 GEMMs M = U @ V in one launch at 128x128 "
                  "(256 threads) or 64x128 (128), grid (ceil(T/BN), ceil(C/BM), 16); dx = A^T M A; dgrad v5's "
                  "candidates after them; the choice measured by Kernel::tune on a GPU, else Winograd where it "
                  "applies with C, K >= 16, dgrad v5's table elsewhere",
})};

}  // namespace
}  // namespace warpnet::device::conv
