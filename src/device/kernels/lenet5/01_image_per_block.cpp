#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "device/kernels/copy.hpp"
#include "device/kernels/grid_stride.hpp"
#include "device/kernels/tuned_choices.hpp"
#include "device/kernels/workspace.hpp"
#include "kernels/common/all.hpp"  // before any kernel file is included (see there)
#if defined(__CUDACC__)
#include "device/kernels/gpu_timing.hpp"
#endif

namespace {
#include "kernels/lenet5/01_image_per_block.cu"
}  // namespace

namespace warpnet::device {
namespace {

// The step kernel's block sizes, candidates of the tune. A block per image:
// at batch 64 the blocks are fewer than an H200's SMs and the step lasts
// one image's time, which more threads an image shorten (most passes have
// 300 to 5,000 items: 1024 threads take conv1's 672 strips in one round,
// 512 in two); at 1024 images, more blocks an SM may do better. 512 until a
// GPU has measured them (the kernel's design; the emulator's copies run it).
constexpr int kStepBlocks[] = {512, 1024, 256};
constexpr const char* kStepNames[] = {"512 threads an image", "1024 threads an image", "256 threads an image"};
constexpr int kStepCandidates = 3;

// f.template operator()<BLOCK>() with candidate i's block size.
template <class F>
decltype(auto) with_block(int i, F&& f) {
  switch (i) {
    case 1: return f.template operator()<1024>();
    case 2: return f.template operator()<256>();
    default: return f.template operator()<512>();
  }
}

// The measured winner for these sizes (tuned(), filled by the tune in the CUDA copy), or 512 threads.
int choice(const Sizes& s) { return tuned().find(s).value_or(0); }

// The step's two kernels with candidate i's block, N images of C classes.
// saved: (N, lenet5::kSaved) floats of device memory.
void launch_step(int i, int N, int C, const float* X, const int* labels, const Lenet5Weights& weights, float* probs,
                 float* row_loss, float* saved, const Lenet5Grads& grads) {
  const size_t shared = size_t(lenet5::kSmFloats) * sizeof(float);
  with_block(i, [&]<int BLOCK>() {
    const auto step = lenet5_image_per_block<BLOCK>;
    if (opt_in_dynamic_shared(step, shared))
      launch_dependent_kernel(step, dim3(unsigned(N)), dim3(BLOCK), shared, N, C, X, labels, weights, probs, row_loss,
                              saved);
  });
  check_launch();
  const int parameters = 2572 + 120 * 401 + 84 * 121 + C * 85;
  const Launch sums = capped_grid(parameters);
  launch_dependent_kernel(lenet5_sum_gradients<kGridStrideBlock>, sums.grid, sums.block, 0, N, C, static_cast<const float*>(saved),
                          grads);
  check_launch();
}

#if defined(__CUDACC__)
std::string tune_on_gpu(const Sizes& s);  // below
#endif

// Multiply-adds of one image's step: conv1 and conv2 forward (4,704·25 and
// 1,600·150), fc1..fc3 forward, the same three back (data gradients), and
// conv2's data gradient (as many terms as its forward), conv2's and conv1's
// weight gradients (2,400·100 and 150·784); then the fully connected weight
// gradients' outer products, which lenet5_sum_gradients adds up.
double macs_per_image(int64_t C) {
  const double dense = 400.0 * 120 + 120.0 * 84 + 84.0 * double(C);
  return 117600.0 * 2 + 240000.0 * 3 + 3 * dense;
}

// Sizes {N, C}; buffers {X, labels, 10 parameters, probs, row_loss, 10 gradients}.
const Registration image_per_block{Kernel{
    .op = "lenet5_step",
    .version = 1,
    .name = "image_per_block",
    .precision = "fp32",
    .shape_text = "block (512, or 1024 or 256 where the GPU's tune measured them faster), grid (N), 79 KiB of "
                  "dynamic shared memory: an image's whole forward and backward per block; then block (256), grid "
                  "(min(ceil(P/256), 1056)): a thread per parameter adds the images' shares",
    .shape = [](const Sizes& s) {
      return Launch{dim3(unsigned(s[0])), dim3(kStepBlocks[choice(s)]), size_t(lenet5::kSmFloats) * sizeof(float)};
    },
    .flops = [](const Sizes& s) { return 2.0 * double(s[0]) * macs_per_image(s[1]); },
    // As the instructions ask, 4 bytes a word. Per image: its pixels, the
    // conv weights (into shared memory), the fully connected weights twice
    // (forward and back), biases, its outputs and its saved row. Then per
    // parameter: a conv parameter's N shares, a dense weight's 2N factors,
    // a bias's N, and the gradient written.
    .bytes = [](const Sizes& s) {
      const double N = double(s[0]), C = double(s[1]);
      const double dense = 400.0 * 120 + 120.0 * 84 + 84.0 * C, biases = 120 + 84 + C;
      const double step = N * (784 + 2572 + 2 * dense + biases + C + 1 + 2572 + 818);
      const double sums = N * (2572 + 2 * dense + biases) + 2572 + dense + biases;
      return 4.0 * (step + sums);
    },
    .launch = [](const Sizes& s, const Launch&, Buffers b) {
      const int N = int(s[0]), C = int(s[1]);
      const auto in = [&](int i) { return static_cast<const float*>(b[i]); };
      const auto out = [&](int i) { return static_cast<float*>(b[i]); };
      const Lenet5Weights weights{in(2), in(3), in(4), in(5), in(6), in(7), in(8), in(9), in(10), in(11)};
      const Lenet5Grads grads{out(14), out(15), out(16), out(17), out(18), out(19), out(20), out(21), out(22), out(23)};
      Workspace saved(size_t(N) * lenet5::kSaved * sizeof(float));  // (N, kSaved)
      launch_step(choice(s), N, C, in(0), static_cast<const int*>(b[1]), weights, out(12), out(13), saved.floats(),
                  grads);
    },
    .copy = kThisCopy,
#if defined(__CUDACC__)
    .tune = tune_on_gpu,
#endif
    .candidate = [](const Sizes& s) { return kStepNames[choice(s)]; },
}};

#if defined(__CUDACC__)
// Every block size timed on one random step of these sizes (the whole
// step, both kernels), after a check that each computes what 512 threads
// compute: every sum of the step is taken in an order no block size changes
// (a warp per dense output, a thread per strip, the bands and the images
// summed in order), so the outputs should be the same bits. The fastest one
// is remembered for these sizes. Tuned once per sizes: training tunes in
// its first step, outside the timed epochs.
std::string tune_on_gpu(const Sizes& s) {
  static constexpr const char* who = "lenet5_step/01's tune";
  if (const auto known = tuned().find(s)) return cat("tuned before: ", kStepNames[*known]);
  const int N = int(s[0]), C = int(s[1]);
  using gpu_timing::DeviceArray, gpu_timing::DeviceFloats, gpu_timing::wait_for_launches;
  Rng rng(2026);
  std::vector<float> host;
  const size_t param_sizes[10] = {150, 6, 2400, 16, 48000, 120, 10080, 84, size_t(84) * C, size_t(C)};
  DeviceFloats X = gpu_timing::random_on_device(host, size_t(N) * 784, rng, who);
  std::vector<int> label_values(static_cast<size_t>(N));
  for (int& l : label_values) l = int(rng.below(uint64_t(C)));
  DeviceArray<int> labels(size_t(N), who);
  check_cuda(cudaMemcpy(labels.p, label_values.data(), size_t(N) * sizeof(int), cudaMemcpyHostToDevice), who,
             ": cudaMemcpy");
  std::vector<DeviceFloats> params, grads;
  for (const size_t n : param_sizes) {
    params.push_back(gpu_timing::random_on_device(host, n, rng, who));
    grads.emplace_back(n, who);
  }
  DeviceFloats probs(size_t(N) * C, who), row_loss(size_t(N), who), saved(size_t(N) * lenet5::kSaved, who);
  const Lenet5Weights weights{params[0].p, params[1].p, params[2].p, params[3].p, params[4].p,
                              params[5].p, params[6].p, params[7].p, params[8].p, params[9].p};
  const Lenet5Grads g{grads[0].p, grads[1].p, grads[2].p, grads[3].p, grads[4].p,
                      grads[5].p, grads[6].p, grads[7].p, grads[8].p, grads[9].p};
  const auto launch = [&](int i) { launch_step(i, N, C, X.p, labels.p, weights, probs.p, row_loss.p, saved.p, g); };
  // Every output, poisoned first (0xFF bytes: NaN) so that one a candidate leaves unwritten differs.
  const auto outputs = [&](int i) {
    std::vector<std::pair<float*, size_t>> all = {{probs.p, size_t(N) * C}, {row_loss.p, size_t(N)}};
    for (size_t k = 0; k < 10; ++k) all.emplace_back(grads[k].p, param_sizes[k]);
    for (const auto& [p, n] : all) check_cuda(cudaMemset(p, 0xFF, n * sizeof(float)), who, ": cudaMemset");
    launch(i);
    wait_for_launches(who, "a checked step");
    std::vector<float> values;
    for (const auto& [p, n] : all) {
      const size_t at = values.size();
      values.resize(at + n);
      check_cuda(cudaMemcpy(values.data() + at, p, n * sizeof(float), cudaMemcpyDeviceToHost), who,
                 ": cudaMemcpy");
    }
    return values;
  };
  const gpu_timing::ProfilerPaused not_profiled;
  // A block size whose bits differ from 512's is not timed, and the record
  // says so: the sums' order should not depend on it, so that would be a
  // finding to look into, but not one to stop a training run for (512's
  // results are the ones the GPU tests check against the CPU).
  const std::vector<float> want = outputs(0);
  bool same[kStepCandidates] = {true, true, true};
  std::string differing;
  for (int i = 1; i < kStepCandidates; ++i) {
    const std::vector<float> got = outputs(i);
    same[i] = std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0;
    if (!same[i]) differing += cat("; ", kStepNames[i], " gave other bits than ", kStepNames[0], ", not timed");
  }
  const gpu_timing::Timed t =
      gpu_timing::pick_fastest(kStepCandidates, who, launch, cat("N=", N, " C=", C), [&](int i) { return same[i]; });
  tuned().remember(s, t.best);
  return cat("measured by lenet5_step/01's tune: ", kStepNames[t.best], " (",
             gpu_timing::describe_times(t.ms, [](int i) { return kStepNames[i]; }), ")",
             differing.empty() ? "; every block size gave the same bits" : differing);
}
#endif

}  // namespace
}  // namespace warpnet::device
