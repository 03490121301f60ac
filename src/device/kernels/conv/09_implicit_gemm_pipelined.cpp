#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace {
#include "kernels/conv/09_implicit_gemm_pipelined.cu"  // includes 08_direct_few_channels.cu and 07
}  // namespace
#include "device/kernels/conv/few_channels_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d/09_implicit_gemm_pipelined";
using conv_v09::kPipelined;

TunedChoices& tuned() {
  static TunedChoices t;
  return t;
}

// The measured winner for these sizes, or the tuning table's choice.
int choice(const Sizes& s) { return tuned().find(s).value_or(conv_v09::table_choice(shape_of(s))); }

Launch launch_shape(int candidate, const Sizes& s) {
  if (candidate >= kPipelined) return v08_shape(candidate - kPipelined, s);
  return conv_v09::with_pipelined(candidate, [&]<class T>() { return gemm_tiles<T::BM, T::BN>(s, T::threads); });
}

// Candidate i launched; the caller checks the launch's error.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  if (candidate >= kPipelined) return launch_v08(kId, candidate - kPipelined, s, l, b);
  const ConvShape g = shape_of(s);
  // The tap table's 16-bit displacements and its "no tap" mark (the kernel file's preconditions).
  WN_CHECK(g.H + g.pad <= conv_v09::kNoTap && g.W + g.pad <= conv_v09::kNoTap &&
               g.dil * (g.R - 1) < conv_v09::kNoTap && g.dil * (g.S - 1) < conv_v09::kNoTap,
           kId, ": H + pad, W + pad and the filter's span must be below ", conv_v09::kNoTap);
  conv_v09::with_pipelined(candidate, [&]<class T>() {
    launch_kernel(T::kernel(), l.grid, l.block, l.dynamic_shared, g, x_of(b), w_of(b), y_of(b));
  });
}

#if defined(__CUDACC__)
// On the current GPU: the pipelined tiles, v8's direct kernel (where it
// applies) and v7's tiles timed on `given`, the fastest checked and
// remembered, so the registered conv2d/09 launches it from then on for these
// sizes (few_channels_tiles.hpp, conv_tiles.hpp, conv_tune.hpp).
std::string tune_on_gpu(const Sizes& given) {
  const ConvShape g = shape_of(complete_sizes(op("conv2d"), given));
  return tune_conv_forward(
      "conv2d/09", given, tuned(), conv_v09::kCandidates, conv_v09::candidate_name,
      [](int i, const Sizes& s, Buffers b) { launch_candidate(i, s, launch_shape(i, s), b); },
      [g](int i) { return conv_v09::candidate_applies(i, g); });
}
#endif

const Registration implicit_gemm_pipelined{Kernel{
    .op = "conv2d",
    .version = 9,
    .name = "implicit_gemm_pipelined",
    .precision = "fp32",
    .shape_text = "v7's tap-table gather as 4-byte cp.async into two stages, multiplied by matmul v9's warp "
                  "tiles: 128x128x8 (256 or 128 threads) or 128x64x8 (128), grid (ceil(N*P*Q/BM), ceil(K/BN)); "
                  "v8's direct kernel and v7's 7 tiles after them; the choice measured by Kernel::tune on a GPU, "
                  "else v8's direct kernel where it applies, the first pipelined tile giving >= 132 blocks, or "
                  "v8's table",
    .shape = [](const Sizes& s) { return launch_shape(choice(s), s); },
    .flops = flops,
    // Pipelined: v4's tiled formula at the tile (the virtual A once per
    // column of tiles, w once per row of tiles, y once); v8's otherwise.
    .bytes = [](const Sizes& s) {
      const int i = choice(s);
      if (i >= kPipelined) return v08_bytes(i - kPipelined, s);
      return conv_v09::with_pipelined(i, [&]<class T>() { return gemm_tile_bytes<T::BM, T::BN>(s, 4.0); });
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
