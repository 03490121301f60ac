#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/10_winograd.cu"  // includes 09_implicit_gemm_pipelined.cu, 08 and 07
}  // namespace
#include "device/kernels/conv/winograd_gemm_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d/10_winograd";

// The two Winograd candidates where they apply, then v9's: its pipelined
// tiles, v8's direct kernel where it applies and v7's 7 GEMM tiles
// (winograd_gemm_tiles.hpp, winograd_tiles.hpp, pipelined_tiles.hpp,
// few_channels_tiles.hpp, conv_tiles.hpp).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::forward,
    .count = conv_v10::kCandidates,
    .name = conv_v10::candidate_name,
    .table_choice = conv_v10::table_choice,
    .shape = v10_shape,
    .bytes = v10_bytes,
    .launch = [](int i, const Sizes& s, const Launch& l, Buffers b) { launch_v10(kId, i, s, l, b); },
    .applies = conv_v10::candidate_applies,
    .winograd = [](int i) { return i < conv_v10::kWinograd ? WinogradTile::f2x2 : WinogradTile::none; },
};

const Registration winograd{autotuned_kernel<kAutotuned>({
    .version = 10,
    .name = "winograd",
    .shape_text = "3x3 filters at stride 1: Winograd F(2x2,3x3): U = G w G^T, block (256), grid (ceil(K*C/256)); "
                  "V = B^T d B, grid (ceil(C*T/256)), T = N*ceil(P/2)*ceil(Q/2); 16 GEMMs M = U @ V in one launch, "
                  "matmul v9's 128x128 (256 threads) or 64x128 (128), grid (ceil(T/BN), ceil(K/BM), 16); "
                  "y = A^T M A, grid (ceil(K*T/256)); v9's candidates after them; the choice measured by Kernel::tune "
                  "on a GPU, else Winograd where it applies with C, K >= 16, v9's table elsewhere",
})};

}  // namespace
}  // namespace warpnet::device::conv
