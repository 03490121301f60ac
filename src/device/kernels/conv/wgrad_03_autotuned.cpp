#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace {
#include "kernels/conv/wgrad_03_autotuned.cu"
}  // namespace
#include "device/kernels/conv/wgrad_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d_wgrad/03_autotuned";

TunedChoices& tuned() {
  static TunedChoices t;
  return t;
}

// The measured winner for these sizes, or the tuning table's choice.
int choice(const Sizes& s) { return tuned().find(s).value_or(conv_wgrad_v03::table_choice(shape_of(s))); }

#if defined(__CUDACC__)
// On the current GPU: every candidate timed on `given`, the ordered sum
// included, the fastest checked and remembered, so the registered
// conv2d_wgrad/03 launches it from then on for these sizes (wgrad_tiles.hpp,
// conv_tune.hpp).
std::string tune_on_gpu(const Sizes& given) {
  return tune_wgrad("conv2d_wgrad/03", given, tuned(), conv_wgrad_v03::kCandidates, conv_wgrad_v03::candidate_name,
                    [](int i, const Sizes& s, Buffers b) { launch_wgrad_tile(kId, i, s, wgrad_tile_shape(i, s), b); });
}
#endif

const Registration autotuned{Kernel{
    .op = "conv2d_wgrad",
    .version = 3,
    .name = "autotuned",
    .precision = "fp32",
    .shape_text = "wgrad v2's split implicit GEMM turned (taps as rows) with a per-tap table in shared memory (no "
                  "division per gathered element), at one of 7 tiles per problem (128x64 ... 32x8; measured by "
                  "Kernel::tune on a GPU, else the largest tile wasting few outputs): block (threads), grid "
                  "(ceil(C*R*S/BM), ceil(K/BN), splits), splits = about 264 blocks / tiles (slices of at least 4 "
                  "steps); then, when splits > 1, sum_splits: the partials added in a fixed order",
    .shape = [](const Sizes& s) { return wgrad_tile_shape(choice(s), s); },
    // The forward's FLOPs: the same products, summed the other way (the
    // ordered sum's splits·K·C·R·S additions are not counted).
    .flops = flops,
    .bytes = [](const Sizes& s) { return wgrad_tile_bytes(choice(s), s); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_wgrad_tile(kId, choice(s), s, l, b);
      check_launch();
    },
    .copy = kThisCopy,
#if defined(__CUDACC__)
    .tune = tune_on_gpu,
#endif
}};

}  // namespace
}  // namespace warpnet::device::conv
