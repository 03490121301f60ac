#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace {
#include "kernels/conv/07_autotuned.cu"
}  // namespace
#include "device/kernels/conv/conv_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d/07_autotuned";

TunedChoices& tuned() {
  static TunedChoices t;
  return t;
}

// The measured winner for these sizes, or the tuning table's choice.
int choice(const Sizes& s) { return tuned().find(s).value_or(conv_v07::table_choice(shape_of(s))); }

#if defined(__CUDACC__)
// On the current GPU: every candidate timed on `given`, the fastest checked
// and remembered, so the registered conv2d/07 launches it from then on for
// these sizes (conv_tiles.hpp, conv_tune.hpp).
std::string tune_on_gpu(const Sizes& given) {
  return tune_conv_forward("conv2d/07", given, tuned(), conv_v07::kCandidates, conv_v07::candidate_name,
                           [](int i, const Sizes& s, Buffers b) { launch_conv_tile(kId, i, s, conv_tile_shape(i, s), b); });
}
#endif

const Registration autotuned{Kernel{
    .op = "conv2d",
    .version = 7,
    .name = "autotuned",
    .precision = "fp32",
    .shape_text = "v4's implicit GEMM with a per-tap table in shared memory (no division per gathered element), at "
                  "one of 7 tiles per problem (128x64 ... 32x8; measured by Kernel::tune on a GPU, else the "
                  "narrowest BN covering K with >= 132 blocks): e.g. block (256), grid (ceil(N*P*Q/128), "
                  "ceil(K/64)) for 128x64",
    .shape = [](const Sizes& s) { return conv_tile_shape(choice(s), s); },
    .flops = flops,
    .bytes = [](const Sizes& s) { return conv_tile_bytes(choice(s), s); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_conv_tile(kId, choice(s), s, l, b);
      check_launch();
    },
    .copy = kThisCopy,
#if defined(__CUDACC__)
    .tune = tune_on_gpu,
#endif
}};

}  // namespace
}  // namespace warpnet::device::conv
