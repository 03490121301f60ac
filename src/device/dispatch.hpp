// Every op on the device its tensors live on: cpu:: (Eigen, f32 and f64)
// for Device::cpu, device:: (the registry's kernels, f32) for Device::emu and
// Device::cuda. Autograd and the optimizers call these, so one model trains
// on any backend (`warpnet train --device cpu|emu|cuda`) with no branch of
// its own. Arguments and results follow cpu/ops.hpp; the exceptions say so.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "cpu/ops.hpp"

namespace warpnet::dispatch {

Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false);
cpu::MatmulGrads matmul_backward(const Tensor& a, const Tensor& b, const Tensor& dc, bool trans_a, bool trans_b,
                                 bool need_da, bool need_db);

Tensor bias_add(const Tensor& x, const Tensor& b);
// relu(bias_add(x, b)); on a device one kernel (bias_relu), on the CPU the two ops.
Tensor bias_relu(const Tensor& x, const Tensor& b);
Tensor bias_add_backward(const Tensor& dy);
cpu::BiasReluGrads bias_relu_backward(const Tensor& y, const Tensor& dy);

Tensor relu(const Tensor& x);
Tensor relu_backward(const Tensor& x, const Tensor& dy);
Tensor gelu(const Tensor& x);
Tensor gelu_backward(const Tensor& x, const Tensor& dy);
Tensor sigmoid(const Tensor& x);
Tensor sigmoid_backward(const Tensor& y, const Tensor& dy);
Tensor tanh(const Tensor& x);
Tensor tanh_backward(const Tensor& y, const Tensor& dy);

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const cpu::Conv2dParams& p);
cpu::Conv2dGrads conv2d_backward(const Tensor& x, const Tensor& w, const Tensor& dy, const cpu::Conv2dParams& p,
                                 bool has_bias, bool needs_dx);

// On the CPU, argmax holds each window's winner; on a device it is left
// undefined and the backward finds the winners again from x.
cpu::MaxPoolResult max_pool2d(const Tensor& x, const cpu::Pool2dParams& p);
Tensor max_pool2d_backward(const Tensor& x, const cpu::MaxPoolResult& forward, const Tensor& dy,
                           const cpu::Pool2dParams& p);
Tensor avg_pool2d(const Tensor& x, const cpu::Pool2dParams& p);
Tensor avg_pool2d_backward(const Tensor& dy, const Shape& x_shape, const cpu::Pool2dParams& p);

// One dropout call's seed: the value the CPU hashes, and the same bits on
// the device of x for the kernel (cpu::dropout_seed_words; undefined on the
// CPU). Written before the step, like StepHyper, so a captured step draws a
// new mask at every replay.
struct DropoutSeed {
  uint64_t value = 0;
  Tensor on_device;
};
// The same mask on every device for the same seed.
cpu::DropoutResult dropout(const Tensor& x, double p, const DropoutSeed& seed);
Tensor dropout_backward(const Tensor& dy, const Tensor& mask);

// labels: i32 (N), on the logits' device.
cpu::SoftmaxCrossEntropy softmax_cross_entropy(const Tensor& logits, const Tensor& labels);
Tensor softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels, double dloss);

// dst += src (gradients accumulating), one shape and dtype.
void add_into(Tensor& dst, const Tensor& src);

// An optimizer's hyperparameters for one step, as the update reads them:
// the values for the CPU, and the same values in a tensor on the weights'
// device for the kernels. The optimizer writes that tensor before each step
// and the kernels read it, so a step captured in a graph (device/graph.hpp)
// reads each replay's values, where scalars passed to a launch would be
// frozen at capture.
struct StepHyper {
  std::vector<double> values;
  Tensor on_device;  // f32, values.size(); undefined when the weights are on the CPU
};

// One step of an optimizer over every parameter, in place. params[i] is
// parameter i's {w, v, g} (SGD) or {w, m, v, g} (Adam), all on one device.
// On the CPU one loop per parameter (cpu::sgd_momentum_update, ...); on a
// device the chosen kernel, which a multi-tensor version runs in one launch.
// SGD:  v ← μ·v + g + wd·w; w ← w − lr·v.  h: {lr, μ, wd}.
void sgd_momentum_update(std::span<const std::array<Tensor*, 3>> params, const StepHyper& h);
// Adam: m ← β1·m + (1−β1)·g; v ← β2·v + (1−β2)·g²; w ← w − a·m/(√v + ε̂).
// h: {a, β1, β2, ε̂}.
void adam_update(std::span<const std::array<Tensor*, 4>> params, const StepHyper& h);

}  // namespace warpnet::dispatch
