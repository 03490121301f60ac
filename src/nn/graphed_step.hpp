// A training step on emu or cuda captured once in a device graph and
// replayed for every later batch of the same size (device/graph.hpp says
// what a replay is and what capture demands of the step).
//
// The step reads its batch's row numbers from a buffer on the device that
// every replay reuses, gathers the rows from the training set held there
// (nn/device_dataset.hpp) as its first two kernels, and leaves each row's
// loss and the softmax in two more buffers. Nothing of this crosses to the
// host step by step: the epoch's row numbers go to the device once
// (start_epoch), each step copies its batch's into the step's buffer and
// its outputs into the epoch's buffers, all on the device and queued
// behind the step before, and the host reads the outcomes of many steps at
// once (finished). So the host queues step after step without waiting for
// one to end, and the GPU does not idle between them while a copy to or
// from the host comes and goes. The host's halves of the step run before
// each replay: the model's (Module::prepare_step: each dropout layer's new
// seed) and the optimizer's (Optimizer::prepare_step: Adam's bias
// correction follows the step count). Both are told the steps are queued:
// what changes every step (Adam's step size, the seeds) then goes to the
// device 64 steps at a time, one copy from the host that waits for the
// queue, and each step's values are copied there on the device.
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
  struct Options {
    // The model is LeNet-5, and its forward, loss and backward run as
    // device::lenet5_step's two kernels instead of the layers'
    // (TrainOptions::fused_step).
    bool fused = false;
    // Captured as programmatic dependent launches
    // (TrainOptions::programmatic_launches).
    bool programmatic = false;
  };
  GraphedStep(Sequential& model, Optimizer& optimizer, const DeviceDataset& data, const Shape& inputs,
              Options options);

  // An epoch begins: `indices` (i32 (R) on the host, from
  // DeviceDataset::indices_of) holds the row numbers of its full batches,
  // batch after batch, R a positive multiple of the batch size.
  void start_epoch(const Tensor& indices);
  // Queues one optimizer step on the epoch's batch `batch` (0, 1, ...: rows
  // batch·B .. batch·B + B − 1 of start_epoch's indices) and returns
  // without waiting for it. Batches go in order: 0, 1, 2, ... `step_number`: the
  // training step's number (Module::Step), for what the layers draw.
  void train(int64_t batch, int64_t step_number);
  // The outcomes of the steps queued since the last call, in order; waits
  // for them. Every step is read before the next start_epoch.
  std::vector<StepOutcome> finished();

  size_t nodes() const { return graph_.nodes(); }  // 0 until captured
  bool fused() const { return options_.fused; }
  bool programmatic() const { return options_.programmatic; }

 private:
  void step();  // what is captured: forward, loss, backward, the update kernels
  void fused_step();  // step() with device::lenet5_step for forward, loss and backward

  Sequential& model_;
  Optimizer& optimizer_;
  const DeviceDataset& data_;
  Tensor indices_;             // on the device, refilled before every step
  Tensor inputs_, labels_;     // on the device, gathered by the step
  Tensor probs_, row_loss_;    // the step's outputs, on the device
  // The epoch's, on the device: every full batch's row numbers, and each
  // step's outputs copied out at the batch's rows (R, C) and (R).
  Tensor epoch_indices_, epoch_probs_, epoch_row_loss_;
  int64_t first_unread_ = 0, next_batch_ = 0;  // batches: [first_unread_, next_batch_) are queued, unread
  Device device_;
  Options options_;
  device::StepGraph graph_;
  int64_t calls_ = 0;
};

}  // namespace warpnet::nn
