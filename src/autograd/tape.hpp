// Reverse-mode automatic differentiation on a tape.
//
// Each differentiable op (functions.hpp) computes its output and, when a tape
// is active and some input needs a gradient, records a closure that turns the
// output's gradient into its inputs' gradients. backward() plays the closures
// in reverse order. Gradients accumulate (+=), so a value used twice receives
// the sum of both contributions.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace warpnet::ag {

struct VarData {
  Tensor value;
  Tensor grad;  // undefined until a gradient arrives
  bool requires_grad = false;
  std::string name;
  Shape dropped_shape;  // value's shape after drop_value()
};

// A node of the computation: a value, and the gradient flowing back into it.
class Var {
 public:
  Var() = default;
  explicit Var(Tensor value, bool requires_grad = false, std::string name = {});

  bool defined() const { return data_ != nullptr; }
  const Tensor& value() const { return data_->value; }
  Tensor& value() { return data_->value; }
  const Tensor& grad() const { return data_->grad; }
  Tensor& grad() { return data_->grad; }
  bool requires_grad() const { return data_ && data_->requires_grad; }
  const std::string& name() const { return data_->name; }
  const Shape& shape() const { return data_->value.defined() ? data_->value.shape() : data_->dropped_shape; }

  // Frees the value while the node lives on for its gradient: for a value
  // no backward reads (the product before a folded ReLU, nn::Conv2d), whose
  // node the closures of the ops around it still hold. Its shape stays, for
  // accumulate's check; value() is undefined from then on.
  void drop_value();

  // grad += g (or grad = g when none has arrived yet). `g` must not be
  // written afterwards by anyone else: ops pass freshly computed tensors.
  void accumulate(const Tensor& g) const;  // a handle: writes the shared node

 private:
  std::shared_ptr<VarData> data_;
};

class Tape {
 public:
  using Backward = std::function<void()>;

  void record(Backward fn) { entries_.push_back(std::move(fn)); }
  // Seeds d(loss)/d(loss) = seed (1; fp16 training seeds its loss scale,
  // nn/loss_scaler.hpp; loss must hold one element) and runs every recorded
  // closure newest first, dropping each once it has run, so the activations
  // it kept alive are freed along the way. Leaves the tape empty.
  void backward(Var& loss, double seed = 1.0);
  void clear() { entries_.clear(); }
  size_t size() const { return entries_.size(); }

  // The tape ops record on, for this thread; null when gradients are off.
  static Tape* active();

 private:
  friend class TapeScope;
  std::vector<Backward> entries_;
};

// RAII: ops inside the scope record on `tape`.
class TapeScope {
 public:
  explicit TapeScope(Tape& tape);
  ~TapeScope();
  TapeScope(const TapeScope&) = delete;
  TapeScope& operator=(const TapeScope&) = delete;

 private:
  Tape* saved_;
};

// RAII: ops inside the scope record nothing (evaluation, inference).
class NoGradScope {
 public:
  NoGradScope();
  ~NoGradScope();
  NoGradScope(const NoGradScope&) = delete;
  NoGradScope& operator=(const NoGradScope&) = delete;

 private:
  Tape* saved_;
};

// True when an op with these inputs must record its backward.
bool needs_grad(std::initializer_list<const Var*> inputs);

}  // namespace warpnet::ag
