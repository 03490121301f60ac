#include "nn/graphed_step.hpp"

#include <exception>

#include "autograd/functions.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "device/backend.hpp"

namespace warpnet::nn {

namespace {

// A batch's mean loss as an eager step reports it: the mean of the rows'
// losses in double (device::mean_row_loss), held in the loss Var's dtype
// (the logits', f32).
double batch_loss(const Tensor& row_loss) { return double(float(device::mean_row_loss(row_loss))); }

}  // namespace

GraphedStep::GraphedStep(Sequential& model, Optimizer& optimizer, const DeviceDataset& data, const Shape& inputs,
                         Options options)
    : model_(model), optimizer_(optimizer), data_(data), device_(data.device()), options_(options),
      graph_(data.device()) {
  MemoryScope scope(MemTag::other, "batch");
  indices_ = Tensor::empty({inputs[0]}, DType::i32, device_);
  inputs_ = Tensor::empty(inputs, DType::f32, device_);
  labels_ = Tensor::empty({inputs[0]}, DType::i32, device_);
}

void GraphedStep::step() {
  data_.gather(indices_, inputs_, labels_);
  if (options_.fused) return fused_step();
  ag::Tape tape;
  ag::TapeScope recording(tape);
  ag::Var logits = model_(ag::Var(inputs_));
  MemoryScope loss_scope(MemTag::activation, "loss");
  ag::Var loss = ag::softmax_cross_entropy(logits, labels_, &probs_, &row_loss_);
  optimizer_.zero_grad();
  tape.backward(loss);
  optimizer_.apply_step();
}

void GraphedStep::fused_step() {
  const std::vector<Parameter*> params = model_.parameters();
  std::vector<const Tensor*> values;
  for (const Parameter* p : params) values.push_back(&p->var.value());
  device::Lenet5Step out;
  {
    MemoryScope scope(MemTag::gradient, "fused step");  // the gradients, and the softmax and losses beside them
    out = device::lenet5_step(inputs_, labels_, values);
  }
  probs_ = std::move(out.probs);
  row_loss_ = std::move(out.row_loss);
  optimizer_.zero_grad();
  for (size_t i = 0; i < params.size(); ++i) params[i]->var.grad() = std::move(out.grads[i]);
  optimizer_.apply_step();
}

void GraphedStep::start_epoch(const Tensor& indices) {
  const int64_t B = indices_.dim(0);
  WN_CHECK(indices.rank() == 1 && indices.dtype() == DType::i32 && indices.dim(0) > 0 && indices.dim(0) % B == 0,
           "train --graph: an epoch's row numbers must be whole batches of ", B, " i32 values, got ",
           indices.describe());
  WN_CHECK(first_unread_ == next_batch_, "train --graph: a new epoch with ", next_batch_ - first_unread_,
           " steps of the last one unread");
  if (!epoch_indices_.defined() || epoch_indices_.shape() != indices.shape()) {
    MemoryScope scope(MemTag::other, "batch");
    epoch_indices_ = Tensor::empty(indices.shape(), DType::i32, device_);
  }
  epoch_indices_.copy_from(indices);  // once an epoch: the only copy from the host that waits
  first_unread_ = next_batch_ = 0;
}

void GraphedStep::train(int64_t batch, int64_t step_number) {
  const int64_t B = indices_.dim(0);
  WN_CHECK(epoch_indices_.defined() && batch == next_batch_ && (batch + 1) * B <= epoch_indices_.dim(0),
           "train --graph: batch ", batch, " asked for, where batch ", next_batch_, " of ",
           epoch_indices_.defined() ? epoch_indices_.dim(0) / B : 0, " comes next");
  indices_.copy_from(epoch_indices_.rows(batch * B, B));  // on the device, queued behind the last step
  model_.prepare_step(device_, {step_number, 0}, /*queued=*/true);
  optimizer_.prepare_step(/*queued=*/true);
  if (calls_ == 0) {
    step();
  } else {
    if (!graph_.ready()) {
      try {
        using Launches = device::StepGraph::Launches;
        graph_.capture([this] { step(); }, options_.programmatic ? Launches::programmatic : Launches::ordered);
      } catch (const std::exception& e) {
        fail("train --graph: capturing the training step failed (", e.what(), "); --graph off trains without one");
      }
    }
    graph_.replay();
  }
  ++calls_;
  const int64_t rows = epoch_indices_.dim(0);
  if (!epoch_row_loss_.defined() || epoch_row_loss_.dim(0) != rows) {
    MemoryScope scope(MemTag::other, "batch");
    epoch_probs_ = Tensor::empty({rows, probs_.dim(1)}, probs_.dtype(), device_);
    epoch_row_loss_ = Tensor::empty({rows}, row_loss_.dtype(), device_);
  }
  epoch_probs_.rows(batch * B, B).copy_from(probs_);  // on the device too
  epoch_row_loss_.rows(batch * B, B).copy_from(row_loss_);
  next_batch_ = batch + 1;
}

std::vector<StepOutcome> GraphedStep::finished() {
  std::vector<StepOutcome> out;
  if (first_unread_ == next_batch_) return out;
  const int64_t B = indices_.dim(0), begin = first_unread_ * B, count = (next_batch_ - first_unread_) * B;
  const Tensor losses = epoch_row_loss_.rows(begin, count).to(Device::cpu);  // waits for the steps
  const Tensor probs = epoch_probs_.rows(begin, count).to(Device::cpu);
  for (int64_t at = 0; at < count; at += B) out.push_back({batch_loss(losses.rows(at, B)), probs.rows(at, B)});
  first_unread_ = next_batch_;
  return out;
}

}  // namespace warpnet::nn
