// A training step on emu or cuda captured once in a device graph and
// replayed for every later batch of the same size (device/graph.hpp says
// what a replay is and what capture demands of the step).
//
// The step reads its batch's row numbers from a buffer on the device that
// every replay reuses (the host copies the next batch's into it first),
// gathers the rows from the training set held there (nn/device_dataset.hpp)
// as its first two kernels, and leaves each row's loss and the softmax in
// two more buffers, read back after the replay. The host's
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
#include "nn/device_dataset.hpp"
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
  // The model's parameters and `data` are on one device (emu or cuda);
  // `inputs` gives the shape of one full batch.
  GraphedStep(Sequential& model, Optimizer& optimizer, const DeviceDataset& data, const Shape& inputs);

  // One optimizer step on the rows `indices` (i32 (B) on the host, from
  // DeviceDataset::indices_of) names; B is the full batch's.
  StepOutcome train(const Tensor& indices);

  size_t nodes() const { return graph_.nodes(); }  // 0 until captured

 private:
  void step();  // what is captured: forward, loss, backward, the update kernels

  Sequential& model_;
  Optimizer& optimizer_;
  const DeviceDataset& data_;
  Tensor indices_;             // on the device, refilled before every step
  Tensor inputs_, labels_;     // on the device, gathered by the step
  Tensor probs_, row_loss_;    // the step's outputs, on the device
  Device device_;
  device::StepGraph graph_;
  int64_t calls_ = 0;
};

}  // namespace warpnet::nn
