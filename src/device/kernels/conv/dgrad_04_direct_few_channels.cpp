#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/dgrad_04_direct_few_channels.cu"  // includes dgrad_03_autotuned.cu
}  // namespace
#include "device/kernels/conv/dgrad_few_channels_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_dgrad/04_direct_few_channels";

// dgrad v4's direct tiles, where they apply, then dgrad v3's 7 GEMM tiles
// (dgrad_few_channels_tiles.hpp, dgrad_tiles.hpp).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::dgrad,
    .count = conv_dgrad_v04::kCandidates,
    .name = conv_dgrad_v04::candidate_name,
    .table_choice = conv_dgrad_v04::table_choice,
    .shape = dgrad_v04_shape,
    .bytes = dgrad_v04_bytes,
    .launch = [](int i, const Sizes& s, const Launch& l, Buffers b) { launch_dgrad_v04(kId, i, s, l, b); },
    .applies = conv_dgrad_v04::candidate_applies,
};

const Registration direct_few_channels{autotuned_kernel<kAutotuned>({
    .version = 4,
    .name = "direct_few_channels",
    .shape_text = "at stride 1 and C <= 8: a thread per dx pixel and all its channels, block (256) over 16x16 (or "
                  "8x32) pixels of one image, grid (ceil(W/16), ceil(H/16), N), the dy window and filters of as "
                  "many output channels as 48 KiB of dynamic shared memory holds per chunk; otherwise dgrad v3's "
                  "7 GEMM tiles; the choice measured by Kernel::tune on a GPU, else the 16x16 direct tile where it "
                  "applies and dgrad v3's table elsewhere",
})};

}  // namespace
}  // namespace warpnet::device::conv
