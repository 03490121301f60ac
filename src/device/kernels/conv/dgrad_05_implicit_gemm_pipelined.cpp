#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace {
#include "kernels/conv/dgrad_05_implicit_gemm_pipelined.cu"  // includes dgrad_04_direct_few_channels.cu and 03
}  // namespace
#include "device/kernels/conv/dgrad_few_channels_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_dgrad/05_implicit_gemm_pipelined";
using conv_dgrad_v05::kPipelined;

TunedChoices& tuned() {
  static TunedChoices t;
  return t;
}

// The measured winner for these sizes, or the tuning table's choice.
int choice(const Sizes& s) { return tuned().find(s).value_or(conv_dgrad_v05::table_choice(shape_of(s))); }

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

#if defined(__CUDACC__)
// On the current GPU: the pipelined tiles (at stride 1), dgrad v4's direct
// tiles (where they apply) and dgrad v3's tiles timed on `given`, the
// fastest checked and remembered, so the registered conv2d_dgrad/05 launches
// it from then on for these sizes (dgrad_few_channels_tiles.hpp,
// dgrad_tiles.hpp, conv_tune.hpp).
std::string tune_on_gpu(const Sizes& given) {
  const ConvShape g = shape_of(complete_sizes(op("conv2d_dgrad"), given));
  return tune_dgrad(
      "conv2d_dgrad/05", given, tuned(), conv_dgrad_v05::kCandidates, conv_dgrad_v05::candidate_name,
      [](int i, const Sizes& s, Buffers b) { launch_candidate(i, s, launch_shape(i, s), b); },
      [g](int i) { return conv_dgrad_v05::candidate_applies(i, g); });
}
#endif

const Registration implicit_gemm_pipelined{Kernel{
    .op = "conv2d_dgrad",
    .version = 5,
    .name = "implicit_gemm_pipelined",
    .precision = "fp32",
    .shape_text = "at stride 1: dgrad v3's tap-table gathers of dy and w as 4-byte cp.async into two stages, "
                  "multiplied by matmul v9's warp tiles (conv v9's kernel): 128x128x8 (256 or 128 threads) or "
                  "128x64x8 (128), grid (ceil(N*H*W/BM), ceil(C/BN)); dgrad v4's direct tiles and v3's 7 tiles "
                  "after them; the choice measured by Kernel::tune on a GPU, else dgrad v4's direct tile where it "
                  "applies, the first pipelined tile giving >= 132 blocks, or dgrad v4's table",
    .shape = [](const Sizes& s) { return launch_shape(choice(s), s); },
    // The forward's FLOPs: the same products, summed the other way.
    .flops = flops,
    // Pipelined: dgrad v3's tiled formula at the tile (the virtual A once per
    // column of tiles, w once per row of tiles, dx once); dgrad v4's otherwise.
    .bytes = [](const Sizes& s) {
      const int i = choice(s);
      if (i >= kPipelined) return dgrad_v04_bytes(i - kPipelined, s);
      const ConvShape g = shape_of(s);
      return conv_dgrad_v05::with_pipelined(i, [&]<class T>() {
        const double M = double(g.N) * g.H * g.W, N = g.C, K = double(g.K) * g.R * g.S;
        return 4.0 * (M * K * ceil_div(g.C, T::BN) + K * N * ceil_div(g.N * g.H * g.W, T::BM) + M * N);
      });
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_candidate(choice(s), s, l, b);
      check_launch();
    },
    .copy = kThisCopy,
#if defined(__CUDACC__)
    .tune = tune_on_gpu,
#endif
}};

}  // namespace
}  // namespace warpnet::device::conv
