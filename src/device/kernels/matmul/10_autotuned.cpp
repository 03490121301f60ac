#include "device/kernels/matmul/gemm_registration.hpp"
#include "device/kernels/tuned_choices.hpp"
#include "device/kernels/workspace.hpp"

namespace {
#include "kernels/matmul/10_autotuned.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

// Filled only by autotune_matmul, in the CUDA copy.
TunedChoices& tuned() {
  static TunedChoices t;
  return t;
}

// The measured winner for these sizes, or the tuning table's choice.
int choice(const Sizes& s) { return tuned().find(s).value_or(sgemm_v10::table_choice(M(s), N(s), K(s))); }

#if defined(__CUDACC__)
std::string tune_on_gpu(const Sizes& s);  // below: device::autotune_matmul, in words
#endif

int splits(int candidate, const Sizes& s) { return sgemm_v10::split_of(candidate, M(s), N(s), K(s)); }

// The GEMM's launch; split-K slices are the grid's z.
Launch shape_of(int candidate, const Sizes& s) {
  return sgemm_v10::with_candidate(candidate, [&]<class T>() {
    dim3 grid = tile_grid(s, T::BM, T::BN);
    grid.z = unsigned(splits(candidate, s));
    return Launch{grid, dim3(T::threads), 0};
  });
}

void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  const auto gemm = [&](Buffers buffers) {
    sgemm_v10::with_candidate(candidate, [&]<class T>() {
      launch_gemm(s, l, buffers, []<bool TA, bool TB>() { return T::template kernel<TA, TB>(); });
    });
  };
  const int slices = int(l.grid.z);
  if (slices == 1) return gemm(b);
  const int elements = M(s) * N(s);
  Workspace part(size_t(slices) * elements * sizeof(float));  // (slices, M, N)
  void* const partial[] = {b[0], b[1], part.floats()};
  gemm(partial);
  // Same stream: runs after every slice is written.
  const warpnet::SumSplitsLaunch sum = warpnet::sum_splits_launch(elements, slices);
  launch_kernel(warpnet::sum_splits<warpnet::kSumThreads>, sum.grid, sum.block, 0, elements, slices,
                static_cast<const float*>(part.floats()), static_cast<float*>(b[2]));
  check_launch();
}

const Registration autotuned{Kernel{
    .op = "matmul",
    .version = 10,
    .name = "autotuned",
    .precision = "fp32",
    .shape_text = "v9's kernel with one of 6 tile shapes per problem (256x128 ... 32x32), or 2 of them with K "
                  "split into grid.z slices and a sum kernel, or the small-problem kernel (32x32x64 in 256 "
                  "threads), K whole or split (measured by device::autotune_matmul on a GPU, else the largest of "
                  "v9's tiles giving >= 132 blocks, else the split with the most): e.g. "
                  "block (256), grid (ceil(N/128), ceil(M/128)) for 128x128",
    .shape = [](const Sizes& s) { return shape_of(choice(s), s); },
    .flops = flops,
    // The chosen tile's A and B tiles are read once per block (see tiled_bytes);
    // split K, each slice's partial C is written and read back once more.
    .bytes = [](const Sizes& s) {
      const int candidate = choice(s), slices = splits(candidate, s);
      const double partials = slices > 1 ? 8.0 * slices * M(s) * N(s) : 0.0;
      return partials +
             sgemm_v10::with_candidate(candidate, [&]<class T>() { return tiled_bytes(s, T::BM, T::BN); });
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_candidate(choice(s), s, l, b); },
    .copy = kThisCopy,
#if defined(__CUDACC__)
    .tune = tune_on_gpu,
#endif
    .candidate = [](const Sizes& s) { return sgemm_v10::candidate_name(choice(s)); },
}};

}  // namespace
}  // namespace warpnet::device::gemm

#if defined(__CUDACC__)
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "device/kernels/gpu_timing.hpp"
#include "device/kernels/matmul/autotune.hpp"

namespace warpnet::device {

MatmulTuning autotune_matmul(const Sizes& given) {
  using namespace gemm;
  constexpr const char* kWho = "autotune_matmul";
  const Op& the_op = op("matmul");
  const Sizes s = complete_sizes(the_op, given);
  const int m = M(s), n = N(s), k = K(s);
  const bool ta = s[3] != 0, tb = s[4] != 0;
  WN_CHECK(m > 0 && n > 0 && k > 0, kWho, ": sizes must be positive, got ", describe_sizes(the_op, s));

  constexpr uint64_t kSeed = 2026;
  Rng rng(kSeed);
  std::vector<float> a, b;
  const gpu_timing::DeviceFloats d_a = gpu_timing::random_on_device(a, size_t(m) * k, rng, kWho);
  const gpu_timing::DeviceFloats d_b = gpu_timing::random_on_device(b, size_t(k) * n, rng, kWho);
  const gpu_timing::DeviceFloats d_c(size_t(m) * n, kWho);
  void* const buffers[] = {d_a.p, d_b.p, d_c.p};
  const auto run = [&](int i) { launch_candidate(i, s, shape_of(i, s), buffers); };

  // Split-K candidates that would not split here are the same launch as their tile: not timed twice.
  const gpu_timing::Timed t =
      gpu_timing::pick_fastest(sgemm_v10::kCandidates, kWho, run, describe_sizes(the_op, s),
                               [&](int i) { return !sgemm_v10::splits_k(i) || splits(i, s) > 1; });
  // C[r,c] by the definition: a K-term dot product (src/device/ops/matmul.cpp's bound).
  const auto reference_at = [&](size_t e) {
    const int r = int(e / n), col = int(e % n);
    gpu_timing::Reference ref;
    for (int kk = 0; kk < k; ++kk)
      ref.add(double(a[ta ? size_t(kk) * m + r : size_t(r) * k + kk]) *
              double(b[tb ? size_t(col) * k + kk : size_t(kk) * n + col]));
    return ref;
  };
  const auto element_name = [&](size_t e) { return cat("C[", e / n, ",", e % n, "]"); };
  for (const int i : gpu_timing::launched_winner_first(t))
    gpu_timing::verify_candidate(kWho, cat(sgemm_v10::candidate_name(i), " at ", describe_sizes(the_op, s)),
                                 [&] { run(i); }, d_c, size_t(m) * n, rng, reference_at, gpu_timing::sum_bound(k),
                                 element_name);

  tuned().remember(s, t.best);
  MatmulTuning result;
  result.ms = t.ms;
  for (int i = 0; i < sgemm_v10::kCandidates; ++i) result.names.push_back(sgemm_v10::candidate_name(i));
  result.chosen = sgemm_v10::candidate_name(t.best);
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
