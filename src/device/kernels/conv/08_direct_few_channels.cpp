#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace {
#include "kernels/conv/08_direct_few_channels.cu"  // includes 07_autotuned.cu
}  // namespace
#include "device/kernels/conv/few_channels_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d/08_direct_few_channels";

TunedChoices& tuned() {
  static TunedChoices t;
  return t;
}

// The measured winner for these sizes, or the tuning table's choice.
int choice(const Sizes& s) { return tuned().find(s).value_or(conv_v08::table_choice(shape_of(s))); }

#if defined(__CUDACC__)
// On the current GPU: the direct kernel (where it applies) and v7's tiles
// timed on `given`, the fastest checked and remembered, so the registered
// conv2d/08 launches it from then on for these sizes (few_channels_tiles.hpp,
// conv_tiles.hpp, conv_tune.hpp).
std::string tune_on_gpu(const Sizes& given) {
  const ConvShape g = shape_of(complete_sizes(op("conv2d"), given));
  return tune_conv_forward(
      "conv2d/08", given, tuned(), conv_v08::kCandidates, conv_v08::candidate_name,
      [](int i, const Sizes& s, Buffers b) { launch_v08(kId, i, s, v08_shape(i, s), b); },
      [g](int i) { return conv_v08::candidate_applies(i, g); });
}
#endif

const Registration direct_few_channels{Kernel{
    .op = "conv2d",
    .version = 8,
    .name = "direct_few_channels",
    .precision = "fp32",
    .shape_text = "at K <= 16: a thread per output pixel and all its channels, block (128 or 256) over whole "
                  "output rows of one image (min(Q, threads) columns), grid (ceil(Q/TW), ceil(P/TH), N), the x "
                  "window and filters of as many input channels as 48 KiB of dynamic shared memory holds per "
                  "chunk; otherwise v7's 7 GEMM tiles; the choice measured by Kernel::tune on a GPU, else the "
                  "128-thread direct kernel where it applies and v7's table elsewhere",
    .shape = [](const Sizes& s) { return v08_shape(choice(s), s); },
    .flops = flops,
    .bytes = [](const Sizes& s) { return v08_bytes(choice(s), s); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_v08(kId, choice(s), s, l, b);
      check_launch();
    },
    .copy = kThisCopy,
#if defined(__CUDACC__)
    .tune = tune_on_gpu,
#endif
}};

}  // namespace
}  // namespace warpnet::device::conv
