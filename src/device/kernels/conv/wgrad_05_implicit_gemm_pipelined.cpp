#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/wgrad_05_implicit_gemm_pipelined.cu"  // includes wgrad_04_direct_few_channels.cu and 03
}  // namespace
#include "device/kernels/conv/wgrad_few_channels_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_wgrad/05_implicit_gemm_pipelined";
using conv_wgrad_v05::kPipelined;

// A pipelined tile (wgrad_tiles.hpp), or v4's candidates after them.
Launch launch_shape(int candidate, const Sizes& s) {
  if (candidate >= kPipelined) return wgrad_v04_shape(candidate - kPipelined, s);
  const ConvShape g = shape_of(s);
  const int splits = conv_wgrad_v05::split_of(candidate, g).splits;
  return conv_wgrad_v05::with_pipelined(candidate, [&]<class T>() { return wgrad_gemm_shape<T>(g, splits); });
}

// Candidate i launched, its ordered sum included; the caller checks the launch's error.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  if (candidate >= kPipelined) return launch_wgrad_v04(kId, candidate - kPipelined, s, l, b);
  const ConvShape g = shape_of(s);
  conv_wgrad_v05::with_pipelined(
      candidate, [&]<class T>() { launch_wgrad_gemm<T>(kId, g, conv_wgrad_v05::split_of(candidate, g), l, b); });
}

// Pipelined: wgrad v3's tiled formula at the tile; v4's otherwise.
double bytes_of(int candidate, const Sizes& s) {
  if (candidate >= kPipelined) return wgrad_v04_bytes(candidate - kPipelined, s);
  const int splits = conv_wgrad_v05::split_of(candidate, shape_of(s)).splits;
  return conv_wgrad_v05::with_pipelined(candidate,
                                        [&]<class T>() { return wgrad_gemm_tile_bytes(s, T::BM, T::BN, splits); });
}

// The 4 pipelined tiles, then v4's candidates: its direct kernel where it
// applies and wgrad v3's 7 GEMM tiles, each launch with its ordered sum.
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::wgrad,
    .count = conv_wgrad_v05::kCandidates,
    .name = conv_wgrad_v05::candidate_name,
    .table_choice = conv_wgrad_v05::table_choice,
    .shape = launch_shape,
    .bytes = bytes_of,
    .launch = launch_candidate,
    .applies = conv_wgrad_v05::candidate_applies,
};

const Registration implicit_gemm_pipelined{autotuned_kernel<kAutotuned>({
    .version = 5,
    .name = "implicit_gemm_pipelined",
    .shape_text = "wgrad v3's split implicit GEMM (taps as rows, the pixels as the reduction) with 4-byte cp.async "
                  "copies into two stages, multiplied by matmul v9's warp tiles: 128x128x8 (256 or 128 threads), "
                  "128x64x8 or 64x64x8 (128), grid (ceil(C*R*S/BM), ceil(K/BN), splits), splits = about 264 "
                  "blocks / tiles, then sum_splits in a fixed order; v4's direct kernel and v3's 7 tiles after "
                  "them; the choice measured by Kernel::tune on a GPU, else v4's direct kernel where it applies "
                  "and the largest pipelined tile within 25% of the fewest padded outputs elsewhere",
})};

}  // namespace
}  // namespace warpnet::device::conv
