// A training step on emu or cuda captured once in a device graph and
// replayed for every later batch of the same size (device/graph.hpp says
// what a replay is and what capture demands of the step).
//
// The step reads its batch from two buffers on the device that every replay
// reuses (the inputs are copied into them first), and leaves each row's
// loss and the softmax in two more, read back after the replay. The host's
// halves of the step run before each replay: the model's
// (Module::prepare_step: each dropout layer's new seed) and the optimizer's
// (Optimizer::prepare_step: Adam's bias correction follows the step count).
//
// The first call runs the step as usual: it makes what a capture may not
// (constants uploaded once, the optimizer's hyperparameter buffer, the conv
// workspace at its size). The second captures the step and replays it; the
// later ones replay. The result equals training without a graph: the same
// kernels in the same order on the same values (tests/graph_checks.hpp).
#pragma once
#include "core/tensor.hpp"
#include "datasets/dataset.hpp"
#include "device/graph.hpp"
#include "nn/layers.hpp"
#include "nn/optim.hpp"

namespace warpnet::nn {

// What a training step reports of its batch.
struct StepOutcome {
  double loss;   // the batch's mean loss
  Tensor probs;  // (N,C) softmax, on the host
};

class GraphedStep {
 public:
  // The model's parameters are on `device` (emu or cuda); `inputs` and
  // `labels` give the shapes of one full batch.
  GraphedStep(Sequential& model, Optimizer& optimizer, Device device, const Shape& inputs, const Shape& labels);

  // One optimizer step on `batch`, which must have the shapes given.
  StepOutcome train(const data::Batch& batch);

  size_t nodes() const { return graph_.nodes(); }  // 0 until captured

 private:
  void step();  // what is captured: forward, loss, backward, the update kernels

  Sequential& model_;
  Optimizer& optimizer_;
  Tensor inputs_, labels_;     // on the device, refilled before every step
  Tensor probs_, row_loss_;    // the step's outputs, on the device
  Device device_;
  device::StepGraph graph_;
  int64_t calls_ = 0;
};

}  // namespace warpnet::nn
