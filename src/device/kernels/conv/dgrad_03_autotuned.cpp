#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/dgrad_03_autotuned.cu"
}  // namespace
#include "device/kernels/conv/dgrad_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_dgrad/03_autotuned";

// dgrad v3's 7 GEMM tiles (dgrad_tiles.hpp).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::dgrad,
    .count = conv_dgrad_v03::kCandidates,
    .name = conv_dgrad_v03::candidate_name,
    .table_choice = conv_dgrad_v03::table_choice,
    .shape = dgrad_tile_shape,
    .bytes = dgrad_tile_bytes,
    .launch = [](int i, const Sizes& s, const Launch& l, Buffers b) { launch_dgrad_tile(i, s, l, b); },
};

const Registration autotuned{autotuned_kernel<kAutotuned>({
    .version = 3,
    .name = "autotuned",
    .shape_text = "dgrad v2's implicit GEMM with a per-tap table in shared memory (no division per gathered "
                  "element) at stride 1, dgrad v2's kernel itself at stride > 1; at one of 7 tiles per problem "
                  "(128x64 ... 32x8; measured by Kernel::tune on a GPU, else the narrowest BN covering C with "
                  ">= 132 blocks): e.g. block (256), grid (ceil(N*H*W/128), ceil(C/64)) for 128x64",
})};

}  // namespace
}  // namespace warpnet::device::conv
