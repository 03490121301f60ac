#include <map>
#include <mutex>

#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/07_autotuned.cu"
}  // namespace

namespace warpnet::device::conv {
namespace {

// The autotuner's winners (candidate index) per sizes. Filled only by
// tune_on_gpu, in the CUDA copy; each copy of this file has its own, always
// empty in the emulator's.
struct Tuned {
  std::mutex mutex;
  std::map<Sizes, int> best;
};
Tuned& tuned() {
  static Tuned t;
  return t;
}

// The measured winner for these sizes, or the tuning table's choice.
int choice(const Sizes& s) {
  {
    Tuned& t = tuned();
    const std::lock_guard lock(t.mutex);
    if (const auto it = t.best.find(s); it != t.best.end()) return it->second;
  }
  return conv_v07::table_choice(shape_of(s));
}

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
#include <cmath>
#include <limits>
#include <vector>

#include "device/kernels/gpu_timing.hpp"

namespace warpnet::device::conv {
namespace {

using gpu_timing::DeviceFloats;
using gpu_timing::EventPair;
using gpu_timing::time_launches;

constexpr const char* kWho = "conv2d/07_autotuned tune";
void check(cudaError_t error, const char* what) { gpu_timing::check(error, kWho, what); }

// On the current GPU: times every candidate on `given` (uniform [-1, 1]
// inputs, fixed seed) with CUDA events, checks the fastest one's output
// (poisoned first; every element finite; 256 sampled elements, the corners
// first, against a double-precision direct convolution within the op's
// bound), caches it, so the registered conv2d/07 launches it from then on
// for these sizes, and says so: "measured: <winner> (<each candidate> <ms>, ...)".
std::string tune_on_gpu(const Sizes& given) {
  const Op& the_op = op("conv2d");
  const Sizes s = complete_sizes(the_op, given);
  const ConvShape g = shape_of(s);
  WN_CHECK(g.N > 0 && g.C > 0 && g.K > 0 && g.P > 0 && g.Q > 0, kWho, ": sizes give no output, got ",
           describe_sizes(the_op, s));

  constexpr uint64_t kSeed = 2026;
  Rng rng(kSeed);
  const size_t HW = size_t(g.H) * g.W, PQ = size_t(g.P) * g.Q;
  std::vector<float> x(size_t(g.N) * g.C * HW), w(size_t(g.K) * g.crs());
  for (float& v : x) v = float(rng.uniform(-1.0, 1.0));
  for (float& v : w) v = float(rng.uniform(-1.0, 1.0));
  const size_t y_size = size_t(g.N) * g.K * PQ;
  DeviceFloats d_x(x.size(), kWho), d_w(w.size(), kWho), d_y(y_size, kWho);
  check(cudaMemcpy(d_x.p, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy x");
  check(cudaMemcpy(d_w.p, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy w");
  void* const buffers[] = {d_x.p, d_w.p, d_y.p};
  check(cudaGetLastError(), "an earlier call (a stale error)");

  const gpu_timing::ProfilerPaused not_profiled;  // the timing launches are not the workload
  EventPair ev(kWho);
  int best = -1;
  const std::vector<double> ms = gpu_timing::time_candidates(
      conv_v07::kCandidates, ev, [&](int i) { launch_candidate(i, s, launch_shape(i, s), buffers); }, best);
  WN_CHECK(best >= 0, kWho, ": no candidate could be launched at ", describe_sizes(the_op, s));

  // The winner's output: poisoned first (0xFF bytes are a NaN), so an element it never writes fails.
  check(cudaMemset(d_y.p, 0xFF, y_size * sizeof(float)), "cudaMemset y");
  launch_candidate(best, s, launch_shape(best, s), buffers);
  check(cudaGetLastError(), "the verifying launch");
  std::vector<float> y(y_size);
  check(cudaMemcpy(y.data(), d_y.p, y.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy y");
  const auto describe = [&] { return cat(conv_v07::candidate_name(best), " at ", describe_sizes(the_op, s)); };
  for (size_t i = 0; i < y.size(); ++i)
    WN_CHECK(std::isfinite(y[i]), kWho, ": ", describe(), " left y[", i, "] = ", y[i]);
  // Sampled outputs (the first and last element of y first) against a double
  // direct convolution, within the op's bound for an fp32 sum of C·R·S
  // products: C·R·S · 1.2e-7 · Σ|x·w| (src/device/ops/conv2d.cpp).
  const int CRS = g.crs();
  for (int sample = 0; sample < 256; ++sample) {
    const size_t e = sample == 0 ? 0 : sample == 1 ? y_size - 1 : size_t(rng.below(y_size));
    const int n = int(e / (size_t(g.K) * PQ)), k = int(e / PQ % g.K), p = int(e % PQ / g.Q), q = int(e % g.Q);
    double want = 0, magnitude = 0;
    for (int crs = 0; crs < CRS; ++crs) {
      const int c = crs / (g.R * g.S), r = crs / g.S % g.R, sx = crs % g.S;
      const int ih = p * g.stride - g.pad + r * g.dil, iw = q * g.stride - g.pad + sx * g.dil;
      if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
      const double product =
          double(x[(size_t(n) * g.C + c) * HW + size_t(ih) * g.W + iw]) * double(w[size_t(k) * CRS + crs]);
      want += product;
      magnitude += std::abs(product);
    }
    const double got = y[e], tolerance = CRS * 1.2e-7 * magnitude + 1e-30;
    WN_CHECK(std::abs(got - want) <= tolerance, kWho, ": ", describe(), " gives y[", n, ",", k, ",", p, ",", q,
             "] = ", got, ", want ", want, " (tolerance ", tolerance, ")");
  }

  {
    Tuned& t = tuned();
    const std::lock_guard lock(t.mutex);
    t.best[s] = best;
  }
  const std::string all = gpu_timing::describe_times(ms, conv_v07::candidate_name);
  return cat("measured by conv2d/07's tune: ", conv_v07::candidate_name(best), " (", all, ")");
}

}  // namespace
}  // namespace warpnet::device::conv
#endif
