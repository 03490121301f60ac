#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/08_direct_few_channels.cu"  // includes 07_autotuned.cu
}  // namespace
#include "device/kernels/conv/few_channels_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d/08_direct_few_channels";

// v8's direct kernel at two block sizes, where it applies, then v7's 7 GEMM
// tiles (few_channels_tiles.hpp, conv_tiles.hpp).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::forward,
    .count = conv_v08::kCandidates,
    .name = conv_v08::candidate_name,
    .table_choice = conv_v08::table_choice,
    .shape = v08_shape,
    .bytes = v08_bytes,
    .launch = [](int i, const Sizes& s, const Launch& l, Buffers b) { launch_v08(kId, i, s, l, b); },
    .applies = conv_v08::candidate_applies,
};

const Registration direct_few_channels{autotuned_kernel<kAutotuned>({
    .version = 8,
    .name = "direct_few_channels",
    .shape_text = "at K <= 16: a thread per output pixel and all its channels, block (128 or 256) over whole "
                  "output rows of one image (min(Q, threads) columns), grid (ceil(Q/TW), ceil(P/TH), N), the x "
                  "window and filters of as many input channels as 48 KiB of dynamic shared memory holds per "
                  "chunk; otherwise v7's 7 GEMM tiles; the choice measured by Kernel::tune on a GPU, else the "
                  "128-thread direct kernel where it applies and v7's table elsewhere",
})};

}  // namespace
}  // namespace warpnet::device::conv
