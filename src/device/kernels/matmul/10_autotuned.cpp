#include <map>
#include <mutex>

#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/10_autotuned.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

// The autotuner's winners (candidate index) per sizes {M, N, K, trans_a,
// trans_b}. Filled only by autotune_matmul, in the CUDA copy; each copy of
// this file has its own, always empty in the emulator's.
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
  return sgemm_v10::table_choice(M(s), N(s));
}

#if defined(__CUDACC__)
std::string tune_on_gpu(const Sizes& s);  // below: device::autotune_matmul, in words
#endif

Launch shape_of(int candidate, const Sizes& s) {
  return sgemm_v10::with_candidate(
      candidate, [&]<class T>() { return Launch{tile_grid(s, T::BM, T::BN), dim3(T::threads), 0}; });
}

void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  sgemm_v10::with_candidate(candidate, [&]<class T>() {
    launch_gemm(s, l, b, []<bool TA, bool TB>() { return T::template kernel<TA, TB>(); });
  });
}

const Registration autotuned{Kernel{
    .op = "matmul",
    .version = 10,
    .name = "autotuned",
    .precision = "fp32",
    .shape_text = "v9's kernel with one of 5 tile shapes per problem (256x128 ... 32x32; measured by "
                  "device::autotune_matmul on a GPU, else the largest tile giving >= 132 blocks): e.g. "
                  "block (256), grid (ceil(N/128), ceil(M/128)) for 128x128",
    .shape = [](const Sizes& s) { return shape_of(choice(s), s); },
    .flops = flops,
    // The chosen tile's A and B tiles are read once per block (see tiled_bytes).
    .bytes = [](const Sizes& s) {
      return sgemm_v10::with_candidate(choice(s), [&]<class T>() { return tiled_bytes(s, T::BM, T::BN); });
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_candidate(choice(s), s, l, b); },
    .copy = kThisCopy,
#if defined(__CUDACC__)
    .tune = tune_on_gpu,
#endif
}};

}  // namespace
}  // namespace warpnet::device::gemm

#if defined(__CUDACC__)
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "device/kernels/gpu_timing.hpp"
#include "device/kernels/matmul/autotune.hpp"

namespace warpnet::device {
namespace {

using gpu_timing::DeviceFloats;
using gpu_timing::EventPair;
using gpu_timing::time_launches;

constexpr const char* kWho = "autotune_matmul";
void check(cudaError_t error, const char* what) { gpu_timing::check(error, kWho, what); }

}  // namespace

MatmulTuning autotune_matmul(const Sizes& given) {
  using namespace gemm;
  const Op& the_op = op("matmul");
  const Sizes s = complete_sizes(the_op, given);
  const int m = M(s), n = N(s), k = K(s);
  const bool ta = s[3] != 0, tb = s[4] != 0;
  WN_CHECK(m > 0 && n > 0 && k > 0, "autotune_matmul: sizes must be positive, got ", describe_sizes(the_op, s));

  constexpr uint64_t kSeed = 2026;
  Rng rng(kSeed);
  std::vector<float> a(size_t(m) * k), b(size_t(k) * n);
  for (float& x : a) x = float(rng.uniform(-1.0, 1.0));
  for (float& x : b) x = float(rng.uniform(-1.0, 1.0));
  DeviceFloats d_a(a.size(), kWho), d_b(b.size(), kWho), d_c(size_t(m) * n, kWho);
  check(cudaMemcpy(d_a.p, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy A");
  check(cudaMemcpy(d_b.p, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy B");
  void* const buffers[] = {d_a.p, d_b.p, d_c.p};
  check(cudaGetLastError(), "an earlier call (a stale error)");

  MatmulTuning result;
  const gpu_timing::ProfilerPaused not_profiled;  // the timing launches are not the workload
  EventPair ev(kWho);
  int best = -1;
  result.ms = gpu_timing::time_candidates(
      sgemm_v10::kCandidates, ev, [&](int i) { launch_candidate(i, s, shape_of(i, s), buffers); }, best);
  for (int i = 0; i < sgemm_v10::kCandidates; ++i) result.names.push_back(sgemm_v10::candidate_name(i));
  WN_CHECK(best >= 0, "autotune_matmul: no candidate could be launched at ", describe_sizes(the_op, s));

  // The winner's output: poisoned first (0xFF bytes are a NaN), so an element it never writes fails.
  check(cudaMemset(d_c.p, 0xFF, size_t(m) * n * sizeof(float)), "cudaMemset C");
  launch_candidate(best, s, shape_of(best, s), buffers);
  check(cudaGetLastError(), "the verifying launch");
  std::vector<float> c(size_t(m) * n);
  check(cudaMemcpy(c.data(), d_c.p, c.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy C");
  const auto describe = [&] { return cat(sgemm_v10::candidate_name(best), " at ", describe_sizes(the_op, s)); };
  for (size_t i = 0; i < c.size(); ++i)
    WN_CHECK(std::isfinite(c[i]), "autotune_matmul: ", describe(), " left C[", i, "] = ", c[i]);
  // Sampled elements (the corners first) against a double dot product, within the
  // op's bound for an fp32 K-term sum: K * 1.2e-7 * sum |a*b| (src/device/ops/matmul.cpp).
  for (int sample = 0; sample < 256; ++sample) {
    const int r = sample < 4 ? (sample % 2 ? m - 1 : 0) : int(rng.below(uint64_t(m)));
    const int col = sample < 4 ? (sample / 2 ? n - 1 : 0) : int(rng.below(uint64_t(n)));
    double want = 0, magnitude = 0;
    for (int kk = 0; kk < k; ++kk) {
      const double product = double(a[ta ? size_t(kk) * m + r : size_t(r) * k + kk]) *
                             double(b[tb ? size_t(col) * k + kk : size_t(kk) * n + col]);
      want += product;
      magnitude += std::abs(product);
    }
    const double got = c[size_t(r) * n + col], tolerance = k * 1.2e-7 * magnitude + 1e-30;
    WN_CHECK(std::abs(got - want) <= tolerance, "autotune_matmul: ", describe(), " gives C[", r, ",", col, "] = ",
             got, ", want ", want, " (tolerance ", tolerance, ")");
  }

  result.chosen = sgemm_v10::candidate_name(best);
  Tuned& t = gemm::tuned();
  const std::lock_guard lock(t.mutex);
  t.best[s] = best;
  return result;
}

}  // namespace warpnet::device

namespace warpnet::device::gemm {
namespace {

// "measured by device::autotune_matmul: <winner> (<each candidate> <ms>, ...)", for the record.
std::string tune_on_gpu(const Sizes& s) {
  const MatmulTuning t = autotune_matmul(s);
  const std::string all = gpu_timing::describe_times(t.ms, [&](int i) { return t.names[size_t(i)]; });
  return cat("measured by device::autotune_matmul: ", t.chosen, " (", all, ")");
}

}  // namespace
}  // namespace warpnet::device::gemm
#endif
