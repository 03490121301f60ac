// Tensor ops on a device backend (Device::emu or Device::cuda) with the
// kernel registry's versions: what layers call when a model runs on a device.
// The tensors live on the device (Tensor::to(Device)); results stay there.
#pragma once
#include <array>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "cpu/ops.hpp"
#include "device/registry.hpp"

namespace warpnet::device {

// The registry copy that launches on `device`: emulator for emu, cuda for cuda.
Copy copy_for(Device device);

// The version layers use by default: the op's entry in best_versions(), an
// fp32 version the device can run (tensor-core versions round inputs to 16
// bits and are chosen explicitly). Throws naming the op when it has no entry
// or its entry is not such a version.
const Kernel& best_kernel(const std::string& op, Device device);
// Op -> its best version (best_versions.cpp): a choice made by hand after
// measuring, so a version registered later never becomes the default by its
// number alone (matmul/19_mine runs only when asked for: --kernels matmul=19).
const std::map<std::string, int>& best_versions();

// Which version each op runs with on a device (`warpnet train --kernels`):
//   "best"               every op's best_kernel (the default);
//   "N"                  every op's highest fp32 version <= N, so "1" runs each
//                        op's first, simplest version;
//   "matmul=3,conv2d=1"  those ops at those versions, the others best.
// Throws naming the op or the version when the choice names one that is not
// registered.
void set_kernel_choice(const std::string& choice);
const std::string& kernel_choice();
// The kernel `op` runs with on `device` under the current choice.
const Kernel& chosen_kernel(const std::string& op, Device device);
// The ids of the kernels launch_op has launched in this process, sorted:
// what a training run reports it ran on.
std::vector<std::string> kernels_launched();
// The same, each with the candidates it ran where it picks one per size
// (Kernel::candidate), "; " between them: "conv2d/11_winograd_fused (direct,
// 128 threads)" — a version's name is not always what ran (Winograd takes
// only 3x3 filters).
std::vector<std::string> kernels_launched_with_candidates();
// The ops the choice names ("softmax=1") of which no kernel has launched in
// this process: a choice that changed nothing, which a run should say.
std::vector<std::string> chosen_ops_not_launched();
// How many launches launch_op, launch_op_many and matmul have made in this
// process. One launch may put more than one node in a captured graph (a
// library's own kernels, split-K's sum), never fewer: a graph holding a
// whole training step has at least the launches of an eager step.
uint64_t kernel_launches();

// On a GPU, a kernel that tunes itself (Kernel::tune: matmul/10 times its
// tile shapes) is tuned the first time launch_op or matmul meets a size, just
// before that launch: a training run then runs what this GPU measured
// fastest at its own sizes, not the tuning table's guess. Never while a graph
// is being captured (a tuner allocates, copies and waits); a size first met
// during a capture keeps the table's choice, and GraphedStep's uncaptured
// first step meets every size its capture will. Emulator copies have no
// tuners. What was tuned in this process, one line per size ("<kernel> at
// <sizes>: <what its tuner chose>"), and the seconds the tuning took:
struct TuningLog {
  std::vector<std::string> lines;
  double seconds = 0;
};
TuningLog kernels_tuned();

// Launches the chosen kernel of `op` at `sizes` on tensors of one device:
// the op's inputs, then its outputs (allocated by the caller with the shapes
// of op.output_shapes). Checks that every tensor is contiguous and on the
// device, and each output's shape.
void launch_op(const std::string& op, const Sizes& sizes, std::initializer_list<const Tensor*> inputs,
               std::initializer_list<Tensor*> outputs);
// launch_op of a one-size op ({n}: the optimizer updates) on many tensors
// at once: entry i holds one launch's inputs and outputs, at n = its first
// input's element count. A kernel with Kernel::launch_many (a multi-tensor
// version) takes every entry in one go, any other one launch per entry.
struct OpTensors {
  std::vector<const Tensor*> inputs;
  std::vector<Tensor*> outputs;
};
void launch_op_many(const std::string& op, std::span<const OpTensors> entries);

// The ops below mirror cpu/ops.hpp (same arguments, same results) for f32
// tensors on Device::emu or Device::cuda; each is one or a few kernel
// launches of the chosen versions. Where a device op differs from its CPU
// twin, the comment says how.

// C = op(A) @ op(B) on A's device with `kernel` (default: chosen_kernel). A
// and B are f32, contiguous and on the same device; shapes follow cpu::matmul.
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false,
              const Kernel* kernel = nullptr);

// The gradients of C = op(A) @ op(B), as cpu::matmul_backward, each one
// matmul on the device with the transposed layouts the kernels take.
cpu::MatmulGrads matmul_backward(const Tensor& a, const Tensor& b, const Tensor& dc, bool trans_a = false,
                                 bool trans_b = false, bool need_da = true, bool need_db = true,
                                 const Kernel* kernel = nullptr);

Tensor bias_add(const Tensor& x, const Tensor& b);
// max(x + b, 0) in one kernel: a bias add with the ReLU after it fused.
Tensor bias_relu(const Tensor& x, const Tensor& b);
Tensor bias_add_backward(const Tensor& dy);
// cpu::bias_relu_backward in one sweep (the bias_relu_backward kernels).
cpu::BiasReluGrads bias_relu_backward(const Tensor& y, const Tensor& dy);

Tensor relu(const Tensor& x);
Tensor relu_backward(const Tensor& x, const Tensor& dy);
Tensor gelu(const Tensor& x);
Tensor gelu_backward(const Tensor& x, const Tensor& dy);
Tensor sigmoid(const Tensor& x);
Tensor sigmoid_backward(const Tensor& y, const Tensor& dy);
Tensor tanh(const Tensor& x);
Tensor tanh_backward(const Tensor& y, const Tensor& dy);

// The convolution kernel, then bias_add when `bias` is defined.
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const cpu::Conv2dParams& p);
// dx by the dgrad kernel, dw by the wgrad kernel, db by bias_add_backward.
cpu::Conv2dGrads conv2d_backward(const Tensor& x, const Tensor& w, const Tensor& dy, const cpu::Conv2dParams& p,
                                 bool has_bias, bool needs_dx = true);

// y only: the backward finds each window's winner again from x (as cuDNN's
// pooling backward does), so no argmax tensor is kept.
Tensor max_pool2d(const Tensor& x, const cpu::Pool2dParams& p);
Tensor max_pool2d_backward(const Tensor& x, const Tensor& dy, const cpu::Pool2dParams& p);
Tensor avg_pool2d(const Tensor& x, const cpu::Pool2dParams& p);
Tensor avg_pool2d_backward(const Tensor& dy, const Shape& x_shape, const cpu::Pool2dParams& p);

// The same mask as cpu::dropout with the same seed (each element's keep is a
// hash of the seed and its index). `seed`: cpu::dropout_seed_words on x's
// device, which the kernel reads there (so a captured step draws the seed
// the host wrote before each replay).
cpu::DropoutResult dropout(const Tensor& x, double p, const Tensor& seed);
// dy ⊙ mask.
Tensor dropout_backward(const Tensor& dy, const Tensor& mask);

// out[i] = table[indices[i]] along dimension 0, on the device: a training
// batch made from a data set uploaded once (kernels/gather/). table: f32 or
// i32, (R, ...); indices: i32 (B) on the same device, each in [0, R) — the
// kernel cannot report a bad one, so the caller checks them on the host
// before the upload; out: table's dtype, B·(row size) elements, written.
void gather_rows(const Tensor& table, const Tensor& indices, Tensor& out);

// labels: i32 (N) on the device. The loss per row comes back to the host,
// where it is averaged in double (one (N) download per batch: mean_row_loss);
// while a graph is captured it stays on the device, and the mean is NaN.
cpu::SoftmaxCrossEntropy softmax_cross_entropy(const Tensor& logits, const Tensor& labels);
// The mean of a loss per row (N) on the device, downloaded and summed in double.
double mean_row_loss(const Tensor& row_loss);
Tensor softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels, double dloss = 1.0);

// dst += src (gradient accumulation), in place.
void add_into(Tensor& dst, const Tensor& src);

// LeNet-5's whole training step in the lenet5_step op's kernels (no CPU
// twin: the CPU runs the layers): x (N,1,28,28), labels i32 (N) and the ten
// parameters in nn::make_lenet5's order (conv1 w, b, conv2 w, b, fc1 w, b,
// fc2 w, b, fc3 w, b), all on one device. Returns each row's softmax and
// loss and the gradient of the batch-mean loss for every parameter, made
// here in their shapes. Throws naming the tensor whose shape is not LeNet-5's.
struct Lenet5Step {
  Tensor probs, row_loss;
  std::vector<Tensor> grads;
};
Lenet5Step lenet5_step(const Tensor& x, const Tensor& labels, std::span<const Tensor* const> params);

// The optimizer updates of cpu/ops.hpp, in place on the device. The
// hyperparameters are a tensor on the device, read by the kernel: sgd
// {lr, momentum, weight_decay}, adam {step_size, beta1, beta2, eps_hat}
// (dispatch::StepHyper says why not scalars).
// A step updates every parameter: params[i] is parameter i's {w, v, g}
// (SGD) or {w, m, v, g} (Adam); one hyper for all. With a multi-tensor
// version (sgd_momentum/03, adam/03) one launch covers up to 16 parameters.
void sgd_momentum_update(std::span<const std::array<Tensor*, 3>> params, const Tensor& hyper);
void adam_update(std::span<const std::array<Tensor*, 4>> params, const Tensor& hyper);

}  // namespace warpnet::device
