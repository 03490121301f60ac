#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace {
#include "kernels/conv/dgrad_04_direct_few_channels.cu"  // includes dgrad_03_autotuned.cu
}  // namespace
#include "device/kernels/conv/dgrad_few_channels_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_dgrad/04_direct_few_channels";

TunedChoices& tuned() {
  static TunedChoices t;
  return t;
}

// The measured winner for these sizes, or the tuning table's choice.
int choice(const Sizes& s) { return tuned().find(s).value_or(conv_dgrad_v04::table_choice(shape_of(s))); }

#if defined(__CUDACC__)
// On the current GPU: the direct tiles (where they apply) and dgrad v3's
// tiles timed on `given`, the fastest checked and remembered, so the
// registered conv2d_dgrad/04 launches it from then on for these sizes
// (dgrad_few_channels_tiles.hpp, dgrad_tiles.hpp, conv_tune.hpp).
std::string tune_on_gpu(const Sizes& given) {
  const ConvShape g = shape_of(complete_sizes(op("conv2d_dgrad"), given));
  return tune_dgrad(
      "conv2d_dgrad/04", given, tuned(), conv_dgrad_v04::kCandidates, conv_dgrad_v04::candidate_name,
      [](int i, const Sizes& s, Buffers b) { launch_dgrad_v04(kId, i, s, dgrad_v04_shape(i, s), b); },
      [g](int i) { return conv_dgrad_v04::candidate_applies(i, g); });
}
#endif

const Registration direct_few_channels{Kernel{
    .op = "conv2d_dgrad",
    .version = 4,
    .name = "direct_few_channels",
    .precision = "fp32",
    .shape_text = "at stride 1 and C <= 8: a thread per dx pixel and all its channels, block (256) over 16x16 (or "
                  "8x32) pixels of one image, grid (ceil(W/16), ceil(H/16), N), the dy window and filters of as "
                  "many output channels as 48 KiB of dynamic shared memory holds per chunk; otherwise dgrad v3's "
                  "7 GEMM tiles; the choice measured by Kernel::tune on a GPU, else the 16x16 direct tile where it "
                  "applies and dgrad v3's table elsewhere",
    .shape = [](const Sizes& s) { return dgrad_v04_shape(choice(s), s); },
    // The forward's FLOPs: the same products, summed the other way.
    .flops = flops,
    .bytes = [](const Sizes& s) { return dgrad_v04_bytes(choice(s), s); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_dgrad_v04(kId, choice(s), s, l, b);
      check_launch();
    },
    .copy = kThisCopy,
#if defined(__CUDACC__)
    .tune = tune_on_gpu,
#endif
}};

}  // namespace
}  // namespace warpnet::device::conv
