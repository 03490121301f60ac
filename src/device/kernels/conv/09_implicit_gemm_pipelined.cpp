#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/09_implicit_gemm_pipelined.cu"  // includes 08_direct_few_channels.cu and 07
}  // namespace
#include "device/kernels/conv/pipelined_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d/09_implicit_gemm_pipelined";

// The 4 pipelined tiles, then v8's candidates: its direct kernel where it
// applies and v7's 7 GEMM tiles (pipelined_tiles.hpp, few_channels_tiles.hpp,
// conv_tiles.hpp).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::forward,
    .count = conv_v09::kCandidates,
    .name = conv_v09::candidate_name,
    .table_choice = conv_v09::table_choice,
    .shape = v09_shape,
    .bytes = v09_bytes,
    .launch = [](int i, const Sizes& s, const Launch& l, Buffers b) { launch_v09(kId, i, s, l, b); },
    .applies = conv_v09::candidate_applies,
};

const Registration implicit_gemm_pipelined{autotuned_kernel<kAutotuned>({
    .version = 9,
    .name = "implicit_gemm_pipelined",
    .shape_text = "v7's tap-table gather as 4-byte cp.async into two stages, multiplied by matmul v9's warp "
                  "tiles: 128x128x8 (256 or 128 threads), 128x64x8 (128) or 256x64x8 (256), grid (ceil(N*P*Q/BM), ceil(K/BN)); "
                  "v8's direct kernel and v7's 7 tiles after them; the choice measured by Kernel::tune on a GPU, "
                  "else v8's direct kernel where it applies, the first pipelined tile giving >= 132 blocks, or "
                  "v8's table",
})};

}  // namespace
}  // namespace warpnet::device::conv
