// Optimizers: SGD with momentum, and Adam. Their state (velocity, moments)
// is charged to MemTag::optimizer under each parameter's layer.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "device/dispatch.hpp"
#include "nn/module.hpp"

namespace warpnet::nn {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Parameter*> params, double lr) : params_(std::move(params)), lr_(lr) {}
  virtual ~Optimizer() = default;

  // Applies one update from the gradients that backward() left:
  // prepare_step(), then apply_step().
  void step() {
    prepare_step();
    apply_step();
  }
  // The host's half of a step: counts it and writes its hyperparameters
  // (to the device, where the weights live there). A step captured in a
  // graph (device/graph.hpp) replays only apply_step, so whoever replays it
  // calls this before every replay. `queued`: the caller queues steps
  // without waiting for them (nn/graphed_step.hpp). A copy from the host
  // waits for everything queued, so values that change every step (Adam's
  // step size) then go to the device kAheadSteps steps at a time, and each
  // step's are copied from there on the device.
  void prepare_step(bool queued = false);
  static constexpr int64_t kAheadSteps = 64;
  // The update kernels (or the CPU loops), reading what prepare_step wrote.
  virtual void apply_step() = 0;
  // Drops the gradients (set to none) so the next backward starts afresh.
  void zero_grad();

  double lr() const { return lr_; }
  void set_lr(double lr) { lr_ = lr; }
  int64_t steps() const { return steps_; }

  // Named state tensors for checkpoints: "<param>/<slot>" → tensor, plus the
  // step count. load_state checks names and shapes.
  virtual std::map<std::string, Tensor> state() const = 0;
  virtual void load_state(const std::map<std::string, Tensor>& state, int64_t steps) = 0;
  virtual std::string name() const = 0;

 protected:
  // A zeroed buffer shaped like `p`, charged to the optimizer under p's layer.
  static Tensor make_slot(const Parameter& p);
  // Copies a checkpointed slot into `slot`, checking it exists and fits.
  static void restore_slot(const std::map<std::string, Tensor>& state, const std::string& key, Tensor& slot);

  // The hyperparameters of step `step` (1, 2, ...) at the current rate, as
  // the update reads them.
  virtual std::vector<double> hyper_at(int64_t step) const = 0;

  std::vector<Parameter*> params_;
  double lr_;
  int64_t steps_ = 0;
  dispatch::StepHyper hyper_;

 private:
  // Sets step steps_'s hyperparameters: on the CPU the values, on a device
  // also the tensor the kernels read (written when they change).
  void write_hyper(bool queued);
  // Queued steps on a device: the values of steps ahead_first_ ..
  // ahead_first_ + kAheadSteps − 1, on the device (f32 (kAheadSteps, n))
  // and as they were computed (to notice a rate changed since).
  Tensor ahead_;
  std::vector<std::vector<double>> ahead_values_;
  int64_t ahead_first_ = 0;
};

// v ← μ·v + g (+ wd·w);  w ← w − lr·v.
class Sgd : public Optimizer {
 public:
  Sgd(std::vector<Parameter*> params, double lr, double momentum = 0.9, double weight_decay = 0.0);
  void apply_step() override;
  std::map<std::string, Tensor> state() const override;
  void load_state(const std::map<std::string, Tensor>& state, int64_t steps) override;
  std::string name() const override { return "sgd"; }

 protected:
  std::vector<double> hyper_at(int64_t step) const override;

 private:
  double momentum_, weight_decay_;
  std::vector<Tensor> velocity_;
};

// Adam (Kingma & Ba) with bias correction.
class Adam : public Optimizer {
 public:
  Adam(std::vector<Parameter*> params, double lr, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8);
  void apply_step() override;
  std::map<std::string, Tensor> state() const override;
  void load_state(const std::map<std::string, Tensor>& state, int64_t steps) override;
  std::string name() const override { return "adam"; }

 protected:
  std::vector<double> hyper_at(int64_t step) const override;

 private:
  double beta1_, beta2_, eps_;
  std::vector<Tensor> m_, v_;
};

// "sgd" or "adam"; SGD uses `momentum` and `weight_decay` (Adam has no
// weight decay here: one above 0 with it is refused).
std::unique_ptr<Optimizer> make_optimizer(const std::string& name, std::vector<Parameter*> params, double lr,
                                          double momentum = 0.9, double weight_decay = 0);

}  // namespace warpnet::nn
