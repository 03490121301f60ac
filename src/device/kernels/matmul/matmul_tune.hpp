// The tune of an autotuned matmul version (matmul/10 on the CUDA cores,
// matmul/24 on the tensor cores) on a real GPU: random A and B in the
// version's input type, every candidate that applies timed, each one that
// ran checked against a CPU dot product (every element at small sizes,
// sampled ones at large: gpu_timing::verify_candidate), the fastest
// remembered for these sizes. The CUDA copy of the registrations alone
// includes it (nvcc); an anonymous namespace as the other registration
// headers (../copy.hpp).
#pragma once
#include <string>
#include <vector>

#include "device/kernels/gpu_timing.hpp"
#include "device/kernels/matmul/autotune.hpp"  // MatmulTuning
#include "device/kernels/matmul/gemm_registration.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace warpnet::device::gemm {
namespace {

// An autotuned version's candidates, as its tune sees them.
struct GemmCandidates {
  const char* who;  // names the tuner in its errors: "autotune_matmul"
  int count;
  const char* (*name)(int candidate);
  void (*launch)(int candidate, const Sizes&, Buffers);  // throws on a failed launch (check_launch)
  // Whether the candidate is one at these sizes; nullptr: all are. A
  // split-K candidate that would not split is the same launch as its tile.
  bool (*applies)(int candidate, const Sizes&) = nullptr;
};

// In: the type A and B are stored in on the device (float, __nv_bfloat16);
// the reference sums the products of the values as stored.
template <class In>
MatmulTuning tune_gemm(const GemmCandidates& c, const Sizes& given, TunedChoices& tuned) {
  const Op& the_op = op("matmul");
  const Sizes s = complete_sizes(the_op, given);
  const int m = M(s), n = N(s), k = K(s);
  const bool ta = s[3] != 0, tb = s[4] != 0;
  WN_CHECK(m > 0 && n > 0 && k > 0, c.who, ": sizes must be positive, got ", describe_sizes(the_op, s));

  constexpr uint64_t kSeed = 2026;
  Rng rng(kSeed);
  std::vector<float> a, b;
  const gpu_timing::DeviceArray<In> d_a = gpu_timing::random_on_device<In>(a, size_t(m) * k, rng, c.who);
  const gpu_timing::DeviceArray<In> d_b = gpu_timing::random_on_device<In>(b, size_t(k) * n, rng, c.who);
  const gpu_timing::DeviceFloats d_c(size_t(m) * n, c.who);
  void* const pointers[] = {d_a.p, d_b.p, d_c.p};
  const Buffers buffers(pointers);
  const auto run = [&](int i) { c.launch(i, s, buffers); };

  const gpu_timing::Timed t = gpu_timing::pick_fastest(
      c.count, c.who, run, describe_sizes(the_op, s),
      c.applies ? std::function<bool(int)>([&](int i) { return c.applies(i, s); }) : std::function<bool(int)>());
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
    gpu_timing::verify_candidate(c.who, cat(c.name(i), " at ", describe_sizes(the_op, s)), [&] { run(i); }, d_c,
                                 size_t(m) * n, k, rng, reference_at, gpu_timing::sum_bound(k), element_name);

  tuned.remember(s, t.best);
  MatmulTuning result;
  result.ms = t.ms;
  for (int i = 0; i < c.count; ++i) result.names.push_back(c.name(i));
  result.chosen = c.name(t.best);
  return result;
}

// What a registration's Kernel::tune returns for the record: "measured by
// <who>: <winner> (<each candidate> <ms>, ...)".
inline std::string describe_tuning(const char* who, const MatmulTuning& t) {
  const std::string all = gpu_timing::describe_times(t.ms, [&](int i) { return t.names[size_t(i)]; });
  return cat("measured by ", who, ": ", t.chosen, " (", all, ")");
}

}  // namespace
}  // namespace warpnet::device::gemm
