#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace {
#include "kernels/conv/dgrad_03_autotuned.cu"
}  // namespace

namespace warpnet::device::conv {
namespace {

TunedChoices& tuned() {
  static TunedChoices t;
  return t;
}

// The measured winner for these sizes, or the tuning table's choice.
int choice(const Sizes& s) { return tuned().find(s).value_or(conv_dgrad_v03::table_choice(shape_of(s))); }

#if defined(__CUDACC__)
std::string tune_on_gpu(const Sizes& s);  // below
#endif

// A tile over dX (N·H·W, C): BM input pixels x BN input channels per block.
Launch launch_shape(int candidate, const Sizes& s) {
  const ConvShape g = shape_of(s);
  return conv_dgrad_v03::with_candidate(candidate, [&]<class T>() {
    return Launch{dim3(ceil_div(g.N * g.H * g.W, T::BM), ceil_div(g.C, T::BN)), dim3(T::threads), 0};
  });
}

// Candidate i's kernel (the tap table's at stride 1, dgrad v2's otherwise),
// launched; the caller checks the launch's error.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  const ConvShape g = shape_of(s);
  // The tap table's 16-bit displacements and its "no tap" mark (the kernel file's preconditions).
  WN_CHECK(g.stride != 1 || (g.H + g.pad <= conv_dgrad_v03::kNoTap && g.W + g.pad <= conv_dgrad_v03::kNoTap &&
                             g.dil * (g.R - 1) < conv_dgrad_v03::kNoTap && g.dil * (g.S - 1) < conv_dgrad_v03::kNoTap),
           "conv2d_dgrad/03_autotuned: H + pad, W + pad and the filter's span must be below ", conv_dgrad_v03::kNoTap);
  conv_dgrad_v03::with_candidate(candidate, [&]<class T>() {
    launch_kernel(T::kernel(g), l.grid, l.block, l.dynamic_shared, g, static_cast<const float*>(b[0]),
                  static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
  });
}

const Registration autotuned{Kernel{
    .op = "conv2d_dgrad",
    .version = 3,
    .name = "autotuned",
    .precision = "fp32",
    .shape_text = "dgrad v2's implicit GEMM with a per-tap table in shared memory (no division per gathered "
                  "element) at stride 1, dgrad v2's kernel itself at stride > 1; at one of 7 tiles per problem "
                  "(128x64 ... 32x8; measured by Kernel::tune on a GPU, else the narrowest BN covering C with "
                  ">= 132 blocks): e.g. block (256), grid (ceil(N*H*W/128), ceil(C/64)) for 128x64",
    .shape = [](const Sizes& s) { return launch_shape(choice(s), s); },
    // The forward's FLOPs: the same products, summed the other way.
    .flops = flops,
    // dgrad v2's formula at the chosen tile (the tables are built from the
    // sizes alone: no global reads): the virtual A (N·H·W, K·R·S) read once
    // per column of tiles, w once per row of tiles, dx written once.
    .bytes = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      return conv_dgrad_v03::with_candidate(choice(s), [&]<class T>() {
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

#if defined(__CUDACC__)
#include "device/kernels/conv/conv_tune.hpp"

namespace warpnet::device::conv {
namespace {

// On the current GPU: times every candidate on `given` (uniform [-1, 1]
// inputs, fixed seed) with CUDA events, checks the fastest one's output
// against a double-precision dgrad by the definition, caches it, so the
// registered conv2d_dgrad/03 launches it from then on for these sizes, and
// says so (conv_tune.hpp).
std::string tune_on_gpu(const Sizes& given) {
  return tune_conv(
      "conv2d_dgrad/03", "conv2d_dgrad", given, tuned(), conv_dgrad_v03::kCandidates, conv_dgrad_v03::candidate_name,
      [](const ConvShape& g) {
        return ConvTuneBuffers{size_t(g.N) * g.K * g.P * g.Q, size_t(g.K) * g.crs(), size_t(g.N) * g.C * g.H * g.W,
                               double(g.K) * g.R * g.S};
      },
      [](int i, const Sizes& s, Buffers b) { launch_candidate(i, s, launch_shape(i, s), b); }, "dx",
      [](const ConvShape& g, size_t e) {
        const size_t HW = size_t(g.H) * g.W;
        return std::array{int(e / (size_t(g.C) * HW)), int(e / HW % g.C), int(e % HW / g.W), int(e % g.W)};
      },
      // dx[n,c,h,x] by the definition: a sum of K·R·S products at most (src/device/ops/conv2d.cpp's bound).
      [](const ConvShape& g, const std::vector<float>& dy, const std::vector<float>& w, std::array<int, 4> at) {
        const auto [n, c, h, x] = at;
        gpu_timing::Reference ref;
        for (int k = 0; k < g.K; ++k)
          for (int r = 0; r < g.R; ++r)
            for (int sx = 0; sx < g.S; ++sx) {
              // Output (p, q) read input (h, x) through tap (r, sx) if p·stride = h + pad − r·dil, likewise q.
              const int ph = h + g.pad - r * g.dil, qw = x + g.pad - sx * g.dil;
              if (ph < 0 || qw < 0 || ph % g.stride || qw % g.stride) continue;
              const int p = ph / g.stride, q = qw / g.stride;
              if (p >= g.P || q >= g.Q) continue;
              ref.add(double(dy[((size_t(n) * g.K + k) * g.P + p) * g.Q + q]) *
                      double(w[((size_t(k) * g.C + c) * g.R + r) * g.S + sx]));
            }
        return ref;
      });
}

}  // namespace
}  // namespace warpnet::device::conv
#endif
