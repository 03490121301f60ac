// The layers: Linear, Conv2d, activations, pooling, Flatten, Dropout, Sequential.
#pragma once
#include <functional>

#include "autograd/functions.hpp"
#include "nn/module.hpp"

namespace warpnet::nn {

// y = x·Wᵀ + b; x: (N,in) → (N,out). Weights and bias start uniform in
// ±1/√in (PyTorch's default), drawn from `rng`.
class Linear : public Module {
 public:
  Linear(std::string name, int64_t in, int64_t out, Rng& rng, bool bias = true);
  // From now on forward applies the ReLU after the bias itself (Sequential::fold_bias_relu).
  void fold_relu() { fold_relu_ = true; }
  bool has_bias() const { return bias_.var.defined(); }
  std::vector<Parameter*> parameters() override;
  Shape output_shape(const Shape& input) const override;
  OpCost cost(const Shape& input) const override;
  std::string describe() const override;

 protected:
  ag::Var forward(const ag::Var& x) override;

 private:
  int64_t in_, out_;
  Parameter weight_, bias_;
  bool fold_relu_ = false;
};

// x: (N,C,H,W) → (N,K,P,Q); weight (K,C,R,R), bias (K); uniform ±1/√(C·R·R).
class Conv2d : public Module {
 public:
  Conv2d(std::string name, int64_t in_channels, int64_t out_channels, int kernel, Rng& rng,
         cpu::Conv2dParams params = {}, bool bias = true);
  // As Linear's.
  void fold_relu() { fold_relu_ = true; }
  bool has_bias() const { return bias_.var.defined(); }
  std::vector<Parameter*> parameters() override;
  Shape output_shape(const Shape& input) const override;
  OpCost cost(const Shape& input) const override;
  std::string describe() const override;

 protected:
  ag::Var forward(const ag::Var& x) override;

 private:
  int64_t in_, out_;
  int kernel_;
  cpu::Conv2dParams params_;
  Parameter weight_, bias_;
  bool fold_relu_ = false;
};

enum class Activation { relu, gelu, sigmoid, tanh };

// An elementwise nonlinearity; any shape in, the same shape out.
class Act : public Module {
 public:
  Act(std::string name, Activation kind) : Module(std::move(name)), kind_(kind) {}
  Activation kind() const { return kind_; }
  // The layer before applies this activation itself from now on, and this
  // one passes its input through (Sequential::fold_bias_relu).
  void fold_into(std::string layer) { folded_into_ = std::move(layer); }
  Shape output_shape(const Shape& input) const override { return input; }
  OpCost cost(const Shape& input) const override;
  std::string describe() const override;

 protected:
  ag::Var forward(const ag::Var& x) override;

 private:
  Activation kind_;
  std::string folded_into_;  // empty: not folded
};

enum class PoolKind { max, average };

// (N,C,H,W) → (N,C,P,Q) over kernel×kernel windows.
class Pool2d : public Module {
 public:
  Pool2d(std::string name, PoolKind kind, cpu::Pool2dParams params)
      : Module(std::move(name)), kind_(kind), params_(params) {}
  Shape output_shape(const Shape& input) const override;
  OpCost cost(const Shape& input) const override;
  std::string describe() const override;

 protected:
  ag::Var forward(const ag::Var& x) override;

 private:
  PoolKind kind_;
  cpu::Pool2dParams params_;
};

// (N, ...) → (N, product of the rest); a view.
class Flatten : public Module {
 public:
  explicit Flatten(std::string name) : Module(std::move(name)) {}
  Shape output_shape(const Shape& input) const override;
  OpCost cost(const Shape&) const override { return {}; }
  std::string describe() const override { return "Flatten"; }

 protected:
  ag::Var forward(const ag::Var& x) override;
};

// Zeroes each value with probability p while training; identity in eval.
class Dropout : public Module {
 public:
  Dropout(std::string name, double p, uint64_t seed);
  Shape output_shape(const Shape& input) const override { return input; }
  OpCost cost(const Shape& input) const override { return elementwise_cost(input.numel(), 1); }
  std::string describe() const override;
  // Makes this step's seed and writes it to `device` (dispatch::DropoutSeed).
  // Queued, the seeds go to the device kAheadSteps at a time, each step's
  // copied from there on the device.
  void prepare_step(Device device, const Step& step, bool queued = false) override;
  static constexpr int64_t kAheadSteps = 64;
  // Step `number`'s seed: a hash of the layer's seed and the number, so a
  // resumed run draws the masks the uninterrupted one did.
  uint64_t seed_of_step(int64_t number) const;

 protected:
  ag::Var forward(const ag::Var& x) override;

 private:
  double p_;
  uint64_t seed_;                 // the layer's, from which every step's comes
  dispatch::DropoutSeed step_seed_;  // this step's, and its copy where the kernels run
  int64_t first_row_ = 0;         // this step's Step::first_row
  bool prepared_ = false;         // prepare_step made step_seed_ and forward has not used it yet
  int64_t unprepared_steps_ = 0;  // forwards with no prepare_step before them (used outside a trainer)
  // Queued steps: the words of steps ahead_first_.. ahead_first_ + kAheadSteps
  // − 1 on the device, a row each.
  Tensor ahead_;
  int64_t ahead_first_ = -1;
  void draw_ahead(Device device, int64_t first);  // steps first.. to `device` in one copy
};

// The names the literature uses.
class ReLU : public Act {
 public:
  explicit ReLU(std::string name) : Act(std::move(name), Activation::relu) {}
};
class MaxPool2d : public Pool2d {
 public:
  MaxPool2d(std::string name, int kernel, int stride) : Pool2d(std::move(name), PoolKind::max, {kernel, stride, 0}) {}
};
class AvgPool2d : public Pool2d {
 public:
  AvgPool2d(std::string name, int kernel, int stride, int padding = 0)
      : Pool2d(std::move(name), PoolKind::average, {kernel, stride, padding}) {}
};

// Runs its layers in order.
class Sequential : public Module {
 public:
  explicit Sequential(std::string name) : Module(std::move(name)) {}
  // Appends a layer and returns a reference to it.
  template <class Layer, class... Args>
  Layer& add(Args&&... args) {
    auto layer = std::make_unique<Layer>(std::forward<Args>(args)...);
    Layer& ref = *layer;
    layers_.push_back(std::move(layer));
    return ref;
  }
  const std::vector<std::unique_ptr<Module>>& layers() const { return layers_; }
  // Folds every ReLU that directly follows a Conv2d or Linear with a bias
  // into that layer: its forward then adds the bias and applies the ReLU in
  // one op (ag::bias_relu; on a device one kernel instead of two, one pass
  // over the activation instead of two), and the ReLU passes its input
  // through. The same values, the same parameters and layer names. The
  // trainer folds models that run on a device (TrainOptions::fold_bias_relu).
  // Returns how many it folded.
  int fold_bias_relu();
  std::vector<Parameter*> parameters() override;
  void set_training(bool training) override;
  void prepare_step(Device device, const Step& step, bool queued = false) override;
  Shape output_shape(const Shape& input) const override;
  OpCost cost(const Shape& input) const override;
  std::string describe() const override;

 protected:
  ag::Var forward(const ag::Var& x) override;

 private:
  std::vector<std::unique_ptr<Module>> layers_;
};

}  // namespace warpnet::nn
