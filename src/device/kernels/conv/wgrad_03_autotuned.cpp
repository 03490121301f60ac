#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace {
#include "kernels/conv/wgrad_03_autotuned.cu"
}  // namespace

namespace warpnet::device::conv {
namespace {

TunedChoices& tuned() {
  static TunedChoices t;
  return t;
}

// The measured winner for these sizes, or the tuning table's choice.
int choice(const Sizes& s) { return tuned().find(s).value_or(conv_wgrad_v03::table_choice(shape_of(s))); }

#if defined(__CUDACC__)
std::string tune_on_gpu(const Sizes& s);  // below
#endif

// A tile over dW^T (C·R·S, K): BM taps x BN output channels per block, one
// slice of the pixels per z.
Launch launch_shape(int candidate, const Sizes& s) {
  const ConvShape g = shape_of(s);
  const int splits = conv_wgrad_v03::split_of(candidate, g).splits;
  return conv_wgrad_v03::with_candidate(candidate, [&]<class T>() {
    return Launch{dim3(ceil_div(g.crs(), T::BM), ceil_div(g.K, T::BN), splits), dim3(T::threads), 0};
  });
}

// Candidate i launched into dw: the GEMM alone for one split, else the
// GEMM into partial tiles and sum_splits; the caller checks the launch's error.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  const ConvShape g = shape_of(s);
  // The tap table's 16-bit displacements and its "no tap" mark (the kernel file's preconditions).
  WN_CHECK(g.H + g.pad <= conv_wgrad_v03::kNoTap && g.W + g.pad <= conv_wgrad_v03::kNoTap &&
               g.dil * (g.R - 1) < conv_wgrad_v03::kNoTap && g.dil * (g.S - 1) < conv_wgrad_v03::kNoTap,
           "conv2d_wgrad/03_autotuned: H + pad, W + pad and the filter's span must be below ", conv_wgrad_v03::kNoTap);
  const conv_wgrad_v03::Split split = conv_wgrad_v03::split_of(candidate, g);
  const auto* x = static_cast<const float*>(b[0]);
  const auto* dy = static_cast<const float*>(b[1]);
  auto* dw = static_cast<float*>(b[2]);
  const auto gemm = [&](float* out) {
    conv_wgrad_v03::with_candidate(candidate, [&]<class T>() {
      launch_kernel(T::kernel(), l.grid, l.block, l.dynamic_shared, g, split.slice, x, dy, out);
    });
  };
  if (split.splits == 1) return gemm(dw);  // one slice: the GEMM writes dw itself
  const int elements = g.K * g.crs();
  Workspace part(size_t(split.splits) * elements * sizeof(float));  // (splits, K, C·R·S)
  gemm(part.floats());
  check_launch();
  // Same stream: runs after every partial tile is written.
  const warpnet::SumSplitsLaunch sum = warpnet::sum_splits_launch(elements, split.splits);
  launch_kernel(warpnet::sum_splits<warpnet::kSumThreads>, sum.grid, sum.block, 0, elements, split.splits,
                static_cast<const float*>(part.floats()), dw);
}

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
    .shape = [](const Sizes& s) { return launch_shape(choice(s), s); },
    // The forward's FLOPs: the same products, summed the other way (the
    // ordered sum's splits·K·C·R·S additions are not counted).
    .flops = flops,
    // Tiled GEMM bytes at the chosen tile for rows C·R·S, columns K, depth
    // N·P·Q: dy read once per row of tiles, the virtual x matrix once per
    // column of tiles (an upper bound: padding taps are not read), every
    // split's partial tile written once; with splits > 1 the partials read
    // back and dw written.
    .bytes = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      const int candidate = choice(s), splits = conv_wgrad_v03::split_of(candidate, g).splits;
      return conv_wgrad_v03::with_candidate(candidate, [&]<class T>() {
        const double rows = g.crs(), cols = g.K, depth = double(g.N) * g.P * g.Q;
        const double gemm = cols * depth * ceil_div(g.crs(), T::BM) + rows * depth * ceil_div(g.K, T::BN) +
                            splits * rows * cols;
        return 4.0 * (gemm + (splits > 1 ? (splits + 1) * rows * cols : 0.0));
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

#if defined(__CUDACC__)
#include "device/kernels/conv/conv_tune.hpp"

namespace warpnet::device::conv {
namespace {

// On the current GPU: times every candidate on `given` (uniform [-1, 1]
// inputs, fixed seed) with CUDA events, the ordered sum included, checks
// the fastest one's output against a double-precision wgrad by the
// definition, caches it, so the registered conv2d_wgrad/03 launches it from
// then on for these sizes, and says so (conv_tune.hpp).
std::string tune_on_gpu(const Sizes& given) {
  return tune_conv(
      "conv2d_wgrad/03", "conv2d_wgrad", given, tuned(), conv_wgrad_v03::kCandidates, conv_wgrad_v03::candidate_name,
      [](const ConvShape& g) {
        return ConvTuneBuffers{size_t(g.N) * g.C * g.H * g.W, size_t(g.N) * g.K * g.P * g.Q, size_t(g.K) * g.crs(),
                               double(g.N) * g.P * g.Q};
      },
      [](int i, const Sizes& s, Buffers b) { launch_candidate(i, s, launch_shape(i, s), b); }, "dw",
      [](const ConvShape& g, size_t e) {
        const size_t RS = size_t(g.R) * g.S;
        return std::array{int(e / (size_t(g.C) * RS)), int(e / RS % g.C), int(e % RS / g.S), int(e % g.S)};
      },
      // dw[k,c,r,s] by the definition: a sum of N·P·Q products at most.
      [](const ConvShape& g, const std::vector<float>& x, const std::vector<float>& dy, std::array<int, 4> at) {
        const auto [k, c, r, sx] = at;
        gpu_timing::Reference ref;
        for (int n = 0; n < g.N; ++n)
          for (int p = 0; p < g.P; ++p)
            for (int q = 0; q < g.Q; ++q) {
              const int ih = p * g.stride - g.pad + r * g.dil, iw = q * g.stride - g.pad + sx * g.dil;
              if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
              ref.add(double(dy[((size_t(n) * g.K + k) * g.P + p) * g.Q + q]) *
                      double(x[((size_t(n) * g.C + c) * g.H + ih) * g.W + iw]));
            }
        return ref;
      });
}

}  // namespace
}  // namespace warpnet::device::conv
#endif
