#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/dgrad_05_implicit_gemm_pipelined.cu"  // includes dgrad_04_direct_few_channels.cu and 03
}  // namespace
#include "device/kernels/conv/dgrad_few_channels_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_dgrad/05_implicit_gemm_pipelined";
using conv_dgrad_v05::kPipelined;

// A pipelined tile over dX (N·H·W, C).
Launch launch_shape(int candidate, const Sizes& s) {
  if (candidate >= kPipelined) return dgrad_v04_shape(candidate - kPipelined, s);
  const ConvShape g = shape_of(s);
  return conv_dgrad_v05::with_pipelined(candidate, [&]<class T>() {
    return Launch{dim3(ceil_div(g.N * g.H * g.W, T::BM), ceil_div(g.C, T::BN)), dim3(T::threads), 0};
  });
}

// Candidate i launched; the caller checks the launch's error.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  if (candidate >= kPipelined) return launch_dgrad_v04(kId, candidate - kPipelined, s, l, b);
  const ConvShape g = shape_of(s);
  // Stride 1, the tap table's 16-bit displacements and its "no tap" mark (the kernel file's preconditions).
  WN_CHECK(g.stride == 1, kId, ": the pipelined tiles take stride 1, got ", describe_sizes(op("conv2d_dgrad"), s));
  WN_CHECK(g.H + g.pad <= conv_dgrad_v05::kNoTap && g.W + g.pad <= conv_dgrad_v05::kNoTap &&
               g.dil * (g.R - 1) < conv_dgrad_v05::kNoTap && g.dil * (g.S - 1) < conv_dgrad_v05::kNoTap,
           kId, ": H + pad, W + pad and the filter's span must be below ", conv_dgrad_v05::kNoTap);
  conv_dgrad_v05::with_pipelined(candidate, [&]<class T>() {
    launch_kernel(T::kernel(), l.grid, l.block, l.dynamic_shared, g, static_cast<const float*>(b[0]),
                  static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
  });
}

// Pipelined: dgrad v3's tiled formula at the tile (the virtual A once per
// column of tiles, w once per row of tiles, dx once); dgrad v4's otherwise.
double bytes_of(int candidate, const Sizes& s) {
  if (candidate >= kPipelined) return dgrad_v04_bytes(candidate - kPipelined, s);
  const ConvShape g = shape_of(s);
  return conv_dgrad_v05::with_pipelined(candidate, [&]<class T>() {
    const double M = double(g.N) * g.H * g.W, N = g.C, K = double(g.K) * g.R * g.S;
    return 4.0 * (M * K * ceil_div(g.C, T::BN) + K * N * ceil_div(g.N * g.H * g.W, T::BM) + M * N);
  });
}

// The 3 pipelined tiles at stride 1, then dgrad v4's candidates: its direct
// tiles where they apply and dgrad v3's 7 GEMM tiles
// (dgrad_few_channels_tiles.hpp, dgrad_tiles.hpp).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::dgrad,
    .count = conv_dgrad_v05::kCandidates,
    .name = conv_dgrad_v05::candidate_name,
    .table_choice = conv_dgrad_v05::table_choice,
    .shape = launch_shape,
    .bytes = bytes_of,
    .launch = launch_candidate,
    .applies = conv_dgrad_v05::candidate_applies,
};

const Registration implicit_gemm_pipelined{autotuned_kernel<kAutotuned>({
    .version = 5,
    .name = "implicit_gemm_pipelined",
    .shape_text = "at stride 1: dgrad v3's tap-table gathers of dy and w as 4-byte cp.async into two stages, "
                  "multiplied by matmul v9's warp tiles (conv v9's kernel): 128x128x8 (256 or 128 threads) or "
                  "128x64x8 (128), grid (ceil(N*H*W/BM), ceil(C/BN)); dgrad v4's direct tiles and v3's 7 tiles "
                  "after them; the choice measured by Kernel::tune on a GPU, else dgrad v4's direct tile where it "
                  "applies, the first pipelined tile giving >= 132 blocks, or dgrad v4's table",
})};

}  // namespace
}  // namespace warpnet::device::conv
