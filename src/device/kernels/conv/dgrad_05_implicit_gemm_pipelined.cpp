#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/dgrad_05_implicit_gemm_pipelined.cu"  // includes dgrad_04_direct_few_channels.cu and 03
}  // namespace
#include "device/kernels/conv/dgrad_pipelined_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_dgrad/05_implicit_gemm_pipelined";

// The 4 pipelined tiles at stride 1, then dgrad v4's candidates: its direct
// tiles where they apply and dgrad v3's 7 GEMM tiles
// (dgrad_pipelined_tiles.hpp, dgrad_few_channels_tiles.hpp, dgrad_tiles.hpp).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::dgrad,
    .count = conv_dgrad_v05::kCandidates,
    .name = conv_dgrad_v05::candidate_name,
    .table_choice = conv_dgrad_v05::table_choice,
    .shape = dgrad_v05_shape,
    .bytes = dgrad_v05_bytes,
    .launch = [](int i, const Sizes& s, const Launch& l, Buffers b) { launch_dgrad_v05(kId, i, s, l, b); },
    .applies = conv_dgrad_v05::candidate_applies,
};

const Registration implicit_gemm_pipelined{autotuned_kernel<kAutotuned>({
    .version = 5,
    .name = "implicit_gemm_pipelined",
    .shape_text = "at stride 1: dgrad v3's tap-table gathers of dy and w as 4-byte cp.async into two stages, "
                  "multiplied by matmul v9's warp tiles (conv v9's kernel): 128x128x8 (256 or 128 threads), "
                  "128x64x8 (128) or 256x64x8 (256), grid (ceil(N*H*W/BM), ceil(C/BN)); dgrad v4's direct tiles and v3's 7 tiles "
                  "after them; the choice measured by Kernel::tune on a GPU, else dgrad v4's direct tile where it "
                  "applies, the first pipelined tile giving >= 132 blocks, or dgrad v4's table",
})};

}  // namespace
}  // namespace warpnet::device::conv
