#include "autograd/tape.hpp"

#include "core/memory.hpp"

namespace warpnet::ag {

namespace {
Tape*& active_tape() {
  thread_local Tape* tape = nullptr;
  return tape;
}

// dst += src elementwise, both contiguous and of one shape and dtype.
void add_into(Tensor& dst, const Tensor& src) {
  WN_CHECK(dst.shape() == src.shape() && dst.dtype() == src.dtype(), "autograd: gradient ", src.describe(),
           " does not match the accumulated ", dst.describe());
  dispatch_float(dst.dtype(), "autograd", [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* d = dst.data<T>();
    const T* s = src.data<T>();
    const int64_t n = dst.numel();
    for (int64_t i = 0; i < n; ++i) d[i] += s[i];
  });
}
}  // namespace

Var::Var(Tensor value, bool requires_grad, std::string name) : data_(std::make_shared<VarData>()) {
  data_->value = std::move(value);
  data_->requires_grad = requires_grad;
  data_->name = std::move(name);
}

void Var::accumulate(const Tensor& g) const {
  if (!data_->requires_grad) return;
  WN_CHECK(g.shape() == shape(), "autograd: gradient of shape ", g.shape(), " for ",
           name().empty() ? "a value" : name(), " of shape ", shape());
  if (!data_->grad.defined()) {
    data_->grad = g.contiguous();
  } else {
    add_into(data_->grad, g.contiguous());
  }
}

void Tape::backward(Var& loss) {
  WN_CHECK(loss.value().numel() == 1, "backward: the loss must be a single value, got ", loss.value().describe());
  {
    MemoryScope scope(MemTag::gradient);
    loss.accumulate(Tensor::full(loss.shape(), 1.0, loss.value().dtype()));
  }
  // Closures allocate input gradients: charge them to gradients, not
  // activations, whatever scope the caller is in.
  MemoryScope scope(MemTag::gradient);
  // Pop each closure before running it and drop it right after: the
  // activations it kept and the output gradient it consumed are freed as the
  // reverse pass goes, not all at the end (mini-AlexNet, batch 256: the peak
  // fell from 251 to 137 MiB).
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
