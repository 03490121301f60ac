#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/wgrad_04_direct_few_channels.cu"  // includes wgrad_03_autotuned.cu
}  // namespace
#include "device/kernels/conv/wgrad_few_channels_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_wgrad/04_direct_few_channels";

// The direct kernel where it applies, then wgrad v3's 7 GEMM tiles, each
// launch with its ordered sum (wgrad_few_channels_tiles.hpp).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::wgrad,
    .count = conv_wgrad_v04::kCandidates,
    .name = conv_wgrad_v04::candidate_name,
    .table_choice = conv_wgrad_v04::table_choice,
    .shape = wgrad_v04_shape,
    .bytes = wgrad_v04_bytes,
    .launch = [](int i, const Sizes& s, const Launch& l, Buffers b) { launch_wgrad_v04(kId, i, s, l, b); },
    .applies = conv_wgrad_v04::candidate_applies,
};

const Registration direct_few_channels{autotuned_kernel<kAutotuned>({
    .version = 4,
    .name = "direct_few_channels",
    .shape_text = "at K <= 16 and C*R*S <= 256: a thread per filter tap and all its output channels, block (256), "
                  "grid (splits), each block walking a run of bands (output rows of one image, their x window and "
                  "dy in <= 48 KiB of dynamic shared memory), about 264 blocks, then sum_splits in a fixed order; "
                  "otherwise wgrad v3's 7 GEMM tiles; the choice measured by Kernel::tune on a GPU, else the "
                  "direct kernel where it applies and wgrad v3's table elsewhere",
})};

}  // namespace
}  // namespace warpnet::device::conv
