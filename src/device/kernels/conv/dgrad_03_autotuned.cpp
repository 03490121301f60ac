#include <map>
#include <mutex>

#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/dgrad_03_autotuned.cu"
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
  return conv_dgrad_v03::table_choice(shape_of(s));
}

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
#include <cmath>
#include <limits>
#include <vector>

#include "device/kernels/gpu_timing.hpp"

namespace warpnet::device::conv {
namespace {

using gpu_timing::DeviceFloats;
using gpu_timing::EventPair;
using gpu_timing::time_launches;

constexpr const char* kWho = "conv2d_dgrad/03_autotuned tune";
void check(cudaError_t error, const char* what) { gpu_timing::check(error, kWho, what); }

// On the current GPU: times every candidate on `given` (uniform [-1, 1]
// inputs, fixed seed) with CUDA events, checks the fastest one's output
// (poisoned first; every element finite; 256 sampled elements, the corners
// first, against a double-precision dgrad within the op's bound), caches it,
// so the registered conv2d_dgrad/03 launches it from then on for these
// sizes, and says so: "measured: <winner> (<each candidate> <ms>, ...)".
std::string tune_on_gpu(const Sizes& given) {
  const Op& the_op = op("conv2d_dgrad");
  const Sizes s = complete_sizes(the_op, given);
  const ConvShape g = shape_of(s);
  WN_CHECK(g.N > 0 && g.C > 0 && g.H > 0 && g.W > 0 && g.K > 0 && g.P > 0 && g.Q > 0, kWho,
           ": sizes give no output, got ", describe_sizes(the_op, s));

  constexpr uint64_t kSeed = 2026;
  Rng rng(kSeed);
  const size_t HW = size_t(g.H) * g.W, PQ = size_t(g.P) * g.Q, RS = size_t(g.R) * g.S;
  std::vector<float> dy(size_t(g.N) * g.K * PQ), w(size_t(g.K) * g.C * RS);
  for (float& v : dy) v = float(rng.uniform(-1.0, 1.0));
  for (float& v : w) v = float(rng.uniform(-1.0, 1.0));
  const size_t dx_size = size_t(g.N) * g.C * HW;
  DeviceFloats d_dy(dy.size(), kWho), d_w(w.size(), kWho), d_dx(dx_size, kWho);
  check(cudaMemcpy(d_dy.p, dy.data(), dy.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy dy");
  check(cudaMemcpy(d_w.p, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy w");
  void* const buffers[] = {d_dy.p, d_w.p, d_dx.p};
  check(cudaGetLastError(), "an earlier call (a stale error)");

  const gpu_timing::ProfilerPaused not_profiled;  // the timing launches are not the workload
  EventPair ev(kWho);
  int best = -1;
  const std::vector<double> ms = gpu_timing::time_candidates(
      conv_dgrad_v03::kCandidates, ev, [&](int i) { launch_candidate(i, s, launch_shape(i, s), buffers); }, best);
  WN_CHECK(best >= 0, kWho, ": no candidate could be launched at ", describe_sizes(the_op, s));

  // The winner's output: poisoned first (0xFF bytes are a NaN), so an element it never writes fails.
  check(cudaMemset(d_dx.p, 0xFF, dx_size * sizeof(float)), "cudaMemset dx");
  launch_candidate(best, s, launch_shape(best, s), buffers);
  check(cudaGetLastError(), "the verifying launch");
  std::vector<float> dx(dx_size);
  check(cudaMemcpy(dx.data(), d_dx.p, dx.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy dx");
  const auto describe = [&] { return cat(conv_dgrad_v03::candidate_name(best), " at ", describe_sizes(the_op, s)); };
  for (size_t i = 0; i < dx.size(); ++i)
    WN_CHECK(std::isfinite(dx[i]), kWho, ": ", describe(), " left dx[", i, "] = ", dx[i]);
  // Sampled elements (the first and last of dx first) against a double
  // dgrad by the definition, within the op's bound for an fp32 sum of
  // K·R·S products: K·R·S · 1.2e-7 · Σ|dy·w| (src/device/ops/conv2d.cpp).
  const int KRS = g.K * g.R * g.S;
  for (int sample = 0; sample < 256; ++sample) {
    const size_t e = sample == 0 ? 0 : sample == 1 ? dx_size - 1 : size_t(rng.below(dx_size));
    const int n = int(e / (size_t(g.C) * HW)), c = int(e / HW % g.C), h = int(e % HW / g.W), x = int(e % g.W);
    double want = 0, magnitude = 0;
    for (int k = 0; k < g.K; ++k)
      for (int r = 0; r < g.R; ++r)
        for (int sx = 0; sx < g.S; ++sx) {
          // Output (p, q) read input (h, x) through tap (r, sx) if p·stride = h + pad − r·dil, likewise q.
          const int ph = h + g.pad - r * g.dil, qw = x + g.pad - sx * g.dil;
          if (ph < 0 || qw < 0 || ph % g.stride || qw % g.stride) continue;
          const int p = ph / g.stride, q = qw / g.stride;
          if (p >= g.P || q >= g.Q) continue;
          const double product = double(dy[((size_t(n) * g.K + k) * g.P + p) * g.Q + q]) *
                                 double(w[((size_t(k) * g.C + c) * g.R + r) * g.S + sx]);
          want += product;
          magnitude += std::abs(product);
        }
    const double got = dx[e], tolerance = KRS * 1.2e-7 * magnitude + 1e-30;
    WN_CHECK(std::abs(got - want) <= tolerance, kWho, ": ", describe(), " gives dx[", n, ",", c, ",", h, ",", x,
             "] = ", got, ", want ", want, " (tolerance ", tolerance, ")");
  }

  {
    Tuned& t = tuned();
    const std::lock_guard lock(t.mutex);
    t.best[s] = best;
  }
  const std::string all = gpu_timing::describe_times(ms, conv_dgrad_v03::candidate_name);
  return cat("measured by conv2d_dgrad/03's tune: ", conv_dgrad_v03::candidate_name(best), " (", all, ")");
}

}  // namespace
}  // namespace warpnet::device::conv
#endif
