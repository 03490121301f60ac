#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/wgrad_03_autotuned.cu"
}  // namespace
#include "device/kernels/conv/wgrad_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_wgrad/03_autotuned";

// wgrad v3's 7 GEMM tiles, each with its ordered sum (wgrad_tiles.hpp). The
// FLOPs are the forward's: the ordered sum's splits·K·C·R·S additions are not
// counted.
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::wgrad,
    .count = conv_wgrad_v03::kCandidates,
    .name = conv_wgrad_v03::candidate_name,
    .table_choice = conv_wgrad_v03::table_choice,
    .shape = wgrad_tile_shape,
    .bytes = wgrad_tile_bytes,
    .launch = [](int i, const Sizes& s, const Launch& l, Buffers b) { launch_wgrad_tile(kId, i, s, l, b); },
};

const Registration autotuned{autotuned_kernel<kAutotuned>({
    .version = 3,
    .name = "autotuned",
    .shape_text = "wgrad v2's split implicit GEMM turned (taps as rows) with a per-tap table in shared memory (no "
                  "division per gathered element), at one of 7 tiles per problem (128x64 ... 32x8; measured by "
                  "Kernel::tune on a GPU, else the largest tile wasting few outputs): block (threads), grid "
                  "(ceil(C*R*S/BM), ceil(K/BN), splits), splits = about 264 blocks / tiles (slices of at least 4 "
                  "steps); then, when splits > 1, sum_splits: the partials added in a fixed order",
})};

}  // namespace
}  // namespace warpnet::device::conv
