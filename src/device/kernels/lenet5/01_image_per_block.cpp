#include "device/kernels/elementwise/elementwise_registration.hpp"  // capped_grid, kBlock
#include "device/kernels/workspace.hpp"

namespace {
#include "kernels/lenet5/01_image_per_block.cu"
}  // namespace

namespace warpnet::device {
namespace {

using elementwise_kernels::capped_grid, elementwise_kernels::kBlock;

// A block per image: at batch 64 the blocks are fewer than an H200's SMs,
// so what shortens the step is threads within an image (most passes have
// 1,000 to 5,000 outputs).
constexpr int kStepThreads = 512;

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
    .shape_text = "block (512), grid (N), 79 KiB of dynamic shared memory: an image's whole forward and backward "
                  "per block; then block (256), grid (min(ceil(P/256), 1056)): a thread per parameter adds the "
                  "images' shares",
    .shape = [](const Sizes& s) {
      return Launch{dim3(unsigned(s[0])), dim3(kStepThreads), size_t(lenet5::kSmFloats) * sizeof(float)};
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
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      const int N = int(s[0]), C = int(s[1]);
      const auto in = [&](int i) { return static_cast<const float*>(b[i]); };
      const auto out = [&](int i) { return static_cast<float*>(b[i]); };
      const Lenet5Weights weights{in(2), in(3), in(4), in(5), in(6), in(7), in(8), in(9), in(10), in(11)};
      const Lenet5Grads grads{out(14), out(15), out(16), out(17), out(18), out(19), out(20), out(21), out(22), out(23)};
      Workspace saved(size_t(N) * lenet5::kSaved * sizeof(float));  // (N, kSaved)
      const auto step = lenet5_image_per_block<kStepThreads>;
      if (opt_in_dynamic_shared(step, l.dynamic_shared))
        launch_dependent_kernel(step, l.grid, l.block, l.dynamic_shared, N, C, in(0), static_cast<const int*>(b[1]),
                                weights, out(12), out(13), saved.floats());
      check_launch();
      const int parameters = 2572 + 120 * 401 + 84 * 121 + C * 85;
      const Launch sums = capped_grid(parameters);
      launch_dependent_kernel(lenet5_sum_gradients<kBlock>, sums.grid, sums.block, 0, N, C,
                    static_cast<const float*>(saved.floats()), grads);
      check_launch();
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device
