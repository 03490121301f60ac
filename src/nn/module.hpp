// Module: a layer or a stack of layers with named parameters.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "autograd/tape.hpp"
#include "core/cost.hpp"

namespace warpnet::nn {

// A trainable tensor: its value is charged to MemTag::parameter and its
// gradient (after backward) to MemTag::gradient, both under the owner's name.
struct Parameter {
  std::string name;  // "conv1.weight"
  ag::Var var;
};

class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Runs the layer with new tensors charged to this layer's activations.
  ag::Var operator()(const ag::Var& x);

  const std::string& name() const { return name_; }
  virtual std::vector<Parameter*> parameters() { return {}; }
  int64_t parameter_count();

  // Moves every parameter to `device` (their gradients follow, as they are
  // computed where the values are); optimizers are made after the move.
  void to(Device device);

  virtual void set_training(bool training) { training_ = training; }
  bool training() const { return training_; }

  // Which training step a layer prepares for: its number from the first
  // step of the first epoch (a resumed run counts on from where it stopped),
  // and the row of the global batch this process's rows start at (a
  // data-parallel rank's shard; 0 in one process).
  struct Step {
    int64_t number = 0;
    int64_t first_row = 0;
  };
  // Before each training step, on the device the step runs on: makes what a
  // layer needs fresh every step and writes it where its kernels read it
  // (dropout's seed), so a step captured in a graph (nn/graphed_step.hpp)
  // gets new values at every replay. What it makes depends on `step` alone,
  // so a resumed run and a data-parallel one draw what one uninterrupted
  // process does. A layer used without it draws in forward instead. Most
  // layers need nothing. `queued`: the caller queues steps without waiting
  // for them (nn/graphed_step.hpp), so a layer should not copy from the host
  // every step (such a copy waits for the queue).
  virtual void prepare_step(Device, const Step& /*step*/, bool /*queued*/ = false) {}

  // Shape bookkeeping for the FLOP and memory chapter: what comes out for an
  // input shape, and what one forward pass costs.
  virtual Shape output_shape(const Shape& input) const = 0;
  virtual OpCost cost(const Shape& input) const = 0;
  // "Conv2d(1→6, 5×5, pad 2)"
  virtual std::string describe() const = 0;

 protected:
  virtual ag::Var forward(const ag::Var& x) = 0;
  // Creates a parameter tensor tagged as this layer's parameter.
  Parameter make_parameter(const std::string& suffix, const Shape& shape);

 private:
  std::string name_;
  bool training_ = true;
};

}  // namespace warpnet::nn
