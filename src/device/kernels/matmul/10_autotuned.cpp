#include "device/kernels/matmul/gemm_registration.hpp"
#include "device/kernels/tuned_choices.hpp"
#include "device/kernels/workspace.hpp"

namespace {
#include "kernels/matmul/10_autotuned.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

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
      const auto* A = static_cast<const float*>(buffers[0]);
      const auto* B = static_cast<const float*>(buffers[1]);
      launch_gemm(s, l, buffers, [&]<bool TA, bool TB>() { return T::template kernel<TA, TB>(M(s), N(s), A, B); });
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
                  "threads), K whole or split, or 256x128x8 or 128x128x8 with 3 stages, or 128x128x16, 128x128x8 "
                  "or 256x128x8 with hoisted copies (measured by "
                  "device::autotune_matmul on a GPU, else the largest of "
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
#include "device/kernels/matmul/matmul_tune.hpp"

namespace warpnet::device {

MatmulTuning autotune_matmul(const Sizes& sizes) {
  using namespace gemm;
  const GemmCandidates candidates{
      .who = "autotune_matmul",
      .count = sgemm_v10::kCandidates,
      .name = sgemm_v10::candidate_name,
      .launch = [](int i, const Sizes& s, Buffers b) { launch_candidate(i, s, shape_of(i, s), b); },
      // Split-K candidates that would not split here are the same launch as their tile: not timed twice.
      .applies = [](int i, const Sizes& s) { return !sgemm_v10::splits_k(i) || splits(i, s) > 1; },
  };
  return tune_gemm<float>(candidates, sizes, tuned());
}

}  // namespace warpnet::device

namespace warpnet::device::gemm {
namespace {

std::string tune_on_gpu(const Sizes& s) { return describe_tuning("device::autotune_matmul", autotune_matmul(s)); }

}  // namespace
}  // namespace warpnet::device::gemm
#endif
