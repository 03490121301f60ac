#include "autograd/tape.hpp"

#include "core/memory.hpp"
#include "device/dispatch.hpp"

namespace warpnet::ag {

namespace {
Tape*& active_tape() {
  thread_local Tape* tape = nullptr;
  return tape;
}
}  // namespace

Var::Var(Tensor value, bool requires_grad, std::string name) : data_(std::make_shared<VarData>()) {
  data_->value = std::move(value);
  data_->requires_grad = requires_grad;
  data_->name = std::move(name);
}

void Var::drop_value() {
  data_->dropped_shape = data_->value.shape();
  data_->value = Tensor();
}

void Var::accumulate(const Tensor& g) const {
  if (!data_->requires_grad) return;
  WN_CHECK(g.shape() == shape(), "autograd: gradient of shape ", g.shape(), " for ",
           name().empty() ? "a value" : name(), " of shape ", shape());
  if (!data_->grad.defined()) {
    data_->grad = g.contiguous();
  } else {
    dispatch::add_into(data_->grad, g.contiguous());
  }
}

void Tape::backward(Var& loss, double seed) {
  WN_CHECK(loss.value().numel() == 1, "backward: the loss must be a single value, got ", loss.value().describe());
  {
    MemoryScope scope(MemTag::gradient);
    loss.accumulate(Tensor::full(loss.shape(), seed, loss.value().dtype()));
  }
  // Closures allocate input gradients: charge them to gradients, not
  // activations, whatever scope the caller is in.
  MemoryScope scope(MemTag::gradient);
  // Pop each closure before running it and drop it right after: the
  // activations it kept and the output gradient it consumed are freed as the
  // reverse pass goes, not all at the end (mini-AlexNet, batch 256: the peak
  // fell from 251 to 137 MiB when this was written, 2026-11-30; chapter 06,
  // part 3, prints today's).
  while (!entries_.empty()) {
    Backward fn = std::move(entries_.back());
    entries_.pop_back();
    fn();
  }
}

Tape* Tape::active() { return active_tape(); }

TapeScope::TapeScope(Tape& tape) : saved_(active_tape()) { active_tape() = &tape; }
TapeScope::~TapeScope() { active_tape() = saved_; }

NoGradScope::NoGradScope() : saved_(active_tape()) { active_tape() = nullptr; }
NoGradScope::~NoGradScope() { active_tape() = saved_; }

bool needs_grad(std::initializer_list<const Var*> inputs) {
  if (!Tape::active()) return false;
  for (const Var* v : inputs)
    if (v && v->requires_grad()) return true;
  return false;
}

}  // namespace warpnet::ag
