#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/07_autotuned.cu"
}  // namespace
#include "device/kernels/conv/conv_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d/07_autotuned";

// v7's 7 GEMM tiles (conv_tiles.hpp).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::forward,
    .count = conv_v07::kCandidates,
    .name = conv_v07::candidate_name,
    .table_choice = conv_v07::table_choice,
    .shape = conv_tile_shape,
    .bytes = conv_tile_bytes,
    .launch = [](int i, const Sizes& s, const Launch& l, Buffers b) { launch_conv_tile(i, s, l, b); },
};

const Registration autotuned{autotuned_kernel<kAutotuned>({
    .version = 7,
    .name = "autotuned",
    .shape_text = "v4's implicit GEMM with a per-tap table in shared memory (no division per gathered element), at "
                  "one of 7 tiles per problem (128x64 ... 32x8; measured by Kernel::tune on a GPU, else the "
                  "narrowest BN covering K with >= 132 blocks): e.g. block (256), grid (ceil(N*P*Q/128), "
                  "ceil(K/64)) for 128x64",
})};

}  // namespace
}  // namespace warpnet::device::conv
