#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace {
#include "kernels/conv/07_autotuned.cu"
}  // namespace

namespace warpnet::device::conv {
namespace {

TunedChoices& tuned() {
  static TunedChoices t;
  return t;
}

// The measured winner for these sizes, or the tuning table's choice.
int choice(const Sizes& s) { return tuned().find(s).value_or(conv_v07::table_choice(shape_of(s))); }

#if defined(__CUDACC__)
std::string tune_on_gpu(const Sizes& s);  // below
#endif

Launch launch_shape(int candidate, const Sizes& s) {
  return conv_v07::with_candidate(candidate, [&]<class T>() { return gemm_tiles<T::BM, T::BN>(s, T::threads); });
}

// Candidate i's kernel, launched; the caller checks the launch's error.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  const ConvShape g = shape_of(s);
  // The tap table's 16-bit displacements and its "no tap" mark (the kernel file's preconditions).
  WN_CHECK(g.H + g.pad <= conv_v07::kNoTap && g.W + g.pad <= conv_v07::kNoTap &&
               g.dil * (g.R - 1) < conv_v07::kNoTap && g.dil * (g.S - 1) < conv_v07::kNoTap,
           "conv2d/07_autotuned: H + pad, W + pad and the filter's span must be below ", conv_v07::kNoTap);
  conv_v07::with_candidate(candidate, [&]<class T>() {
    launch_kernel(T::kernel(), l.grid, l.block, l.dynamic_shared, g, x_of(b), w_of(b), y_of(b));
  });
}

const Registration autotuned{Kernel{
    .op = "conv2d",
    .version = 7,
    .name = "autotuned",
    .precision = "fp32",
    .shape_text = "v4's implicit GEMM with a per-tap table in shared memory (no division per gathered element), at "
                  "one of 7 tiles per problem (128x64 ... 32x8; measured by Kernel::tune on a GPU, else the "
                  "narrowest BN covering K with >= 132 blocks): e.g. block (256), grid (ceil(N*P*Q/128), "
                  "ceil(K/64)) for 128x64",
    .shape = [](const Sizes& s) { return launch_shape(choice(s), s); },
    .flops = flops,
    // The chosen tile's bytes, v4's formula (the table is built from the
    // sizes alone: no global reads).
    .bytes = [](const Sizes& s) {
      return conv_v07::with_candidate(choice(s), [&]<class T>() { return gemm_tile_bytes<T::BM, T::BN>(s, 4.0); });
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
// against a double-precision direct convolution, caches it, so the
// registered conv2d/07 launches it from then on for these sizes, and says
// so (conv_tune.hpp).
std::string tune_on_gpu(const Sizes& given) {
  return tune_conv(
      "conv2d/07", "conv2d", given, tuned(), conv_v07::kCandidates, conv_v07::candidate_name,
      [](const ConvShape& g) {
        return ConvTuneBuffers{size_t(g.N) * g.C * g.H * g.W, size_t(g.K) * g.crs(), size_t(g.N) * g.K * g.P * g.Q,
                               double(g.crs())};
      },
      [](int i, const Sizes& s, Buffers b) { launch_candidate(i, s, launch_shape(i, s), b); }, "y",
      [](const ConvShape& g, size_t e) {
        const size_t PQ = size_t(g.P) * g.Q;
        return std::array{int(e / (size_t(g.K) * PQ)), int(e / PQ % g.K), int(e % PQ / g.Q), int(e % g.Q)};
      },
      // y[n,k,p,q] by the definition: a sum of C·R·S products (src/device/ops/conv2d.cpp's bound).
      [](const ConvShape& g, const std::vector<float>& x, const std::vector<float>& w, std::array<int, 4> at) {
        const auto [n, k, p, q] = at;
        const int CRS = g.crs();
        gpu_timing::Reference ref;
        for (int crs = 0; crs < CRS; ++crs) {
          const int c = crs / (g.R * g.S), r = crs / g.S % g.R, sx = crs % g.S;
          const int ih = p * g.stride - g.pad + r * g.dil, iw = q * g.stride - g.pad + sx * g.dil;
          if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
          ref.add(double(x[((size_t(n) * g.C + c) * g.H + ih) * g.W + iw]) * double(w[size_t(k) * CRS + crs]));
        }
        return ref;
      });
}

}  // namespace
}  // namespace warpnet::device::conv
#endif
