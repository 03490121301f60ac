#include "nn/graphed_step.hpp"

#include <exception>

#include "autograd/functions.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "device/backend.hpp"

namespace warpnet::nn {

GraphedStep::GraphedStep(Sequential& model, Optimizer& optimizer, const DeviceDataset& data, const Shape& inputs)
    : model_(model), optimizer_(optimizer), data_(data), device_(data.device()), graph_(data.device()) {
  MemoryScope scope(MemTag::other, "batch");
  indices_ = Tensor::empty({inputs[0]}, DType::i32, device_);
  inputs_ = Tensor::empty(inputs, DType::f32, device_);
  labels_ = Tensor::empty({inputs[0]}, DType::i32, device_);
}

void GraphedStep::step() {
  data_.gather(indices_, inputs_, labels_);
  ag::Tape tape;
  ag::TapeScope recording(tape);
  ag::Var logits = model_(ag::Var(inputs_));
  MemoryScope loss_scope(MemTag::activation, "loss");
  ag::Var loss = ag::softmax_cross_entropy(logits, labels_, &probs_, &row_loss_);
  optimizer_.zero_grad();
  tape.backward(loss);
  optimizer_.apply_step();
}

StepOutcome GraphedStep::train(const Tensor& indices) {
  WN_CHECK(indices.shape() == indices_.shape(), "train --graph: a batch of ", indices.shape(),
           " rows for a step captured with ", indices_.shape());
  indices_.copy_from(indices);
  model_.prepare_step(device_);
  optimizer_.prepare_step();
  if (calls_ == 0) {
    step();
  } else {
    if (!graph_.ready()) {
      try {
        graph_.capture([this] { step(); });
      } catch (const std::exception& e) {
        fail("train --graph: capturing the training step failed (", e.what(), "); --graph off trains without one");
      }
    }
    graph_.replay();
  }
  ++calls_;
  // The mean as an eager step reports it: softmax_cross_entropy's, held in
  // the loss Var's dtype (the logits', f32).
  return {double(float(device::mean_row_loss(row_loss_))), probs_.to(Device::cpu)};
}

}  // namespace warpnet::nn
