#include "nn/graphed_step.hpp"

#include <exception>

#include "autograd/functions.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "device/backend.hpp"

namespace warpnet::nn {

GraphedStep::GraphedStep(Sequential& model, Optimizer& optimizer, Device device, const Shape& inputs,
                         const Shape& labels)
    : model_(model), optimizer_(optimizer), device_(device), graph_(device) {
  MemoryScope scope(MemTag::other, "batch");
  inputs_ = Tensor::empty(inputs, DType::f32, device);
  labels_ = Tensor::empty(labels, DType::i32, device);
}

void GraphedStep::step() {
  ag::Tape tape;
  ag::TapeScope recording(tape);
  ag::Var logits = model_(ag::Var(inputs_));
  MemoryScope loss_scope(MemTag::activation, "loss");
  ag::Var loss = ag::softmax_cross_entropy(logits, labels_, &probs_, &row_loss_);
  optimizer_.zero_grad();
  tape.backward(loss);
  optimizer_.apply_step();
}

StepOutcome GraphedStep::train(const data::Batch& batch) {
  WN_CHECK(batch.inputs.shape() == inputs_.shape() && batch.labels.shape() == labels_.shape(),
           "train --graph: a batch of ", batch.inputs.shape(), " and ", batch.labels.shape(),
           " for a step captured with ", inputs_.shape(), " and ", labels_.shape());
  inputs_.copy_from(batch.inputs);
  labels_.copy_from(batch.labels);
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
