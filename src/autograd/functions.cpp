#include "autograd/functions.hpp"

#include <utility>

#include "autograd/precision.hpp"
#include "core/memory.hpp"
#include "device/dispatch.hpp"

namespace warpnet::ag {

namespace {

// Records `fn` on the active tape. The closure runs later, inside backward(),
// with new tensors charged as gradients of the layer that ran the forward.
template <class Fn>
void record(Fn&& fn) {
  std::string layer = current_mem_context().layer;
  Tape::active()->record([layer = std::move(layer), fn = std::forward<Fn>(fn)]() mutable {
    MemoryScope scope(MemTag::gradient, layer);
    fn();
  });
}

// The output of an op: it needs a gradient exactly when some input does.
Var output(Tensor value, bool grad) { return Var(std::move(value), grad); }

// An op's output kept as an activation: in the active precision's storage
// format (bf16/fp16 round it; autograd/precision.hpp). Views (flatten) and
// the loss use output() and stay as they are. ReLU and max pooling output
// values of their input (or zero), in the format whenever the input is, so
// they skip the rounding pass (`picks_input_values`).
Var activation(Tensor value, bool grad, bool picks_input_values = false) {
  MixedPrecision* policy = MixedPrecision::active();
  if (policy && !picks_input_values) policy->keep_as_activation(value);
  return output(std::move(value), grad);
}

// A gradient a backward wrote, as autocast's kernels write it: in the
// activation format (bf16, fp16; in fp16 a value past 65504 becomes inf,
// which the loss scaler then finds) before it joins the fp32 gradient it is
// added to. `policy`: the one active when the forward ran (null: fp32).
Tensor as_written(Tensor g, const MixedPrecision* policy) {
  const numeric::Format* f = policy && g.defined() ? policy->activation_format() : nullptr;
  return f ? round_to_format(g, *f) : g;
}

// The tensors an op's forward makes count at the width its activations are
// kept in (2 bytes under bf16/fp16): declare one at the top of the op.
struct ActivationWidth {
  ValueWidthScope scope{MixedPrecision::active() ? MixedPrecision::active()->activation_bytes() : 4};
};

// The operands of one matmul or convolution under the active precision:
// what the forward multiplies, and what its backward multiplies again.
// bf16, fp16 and fp8 keep their cast copies for the backward, as autocast
// and Transformer Engine do; tf32 rounds inside a GPU's GEMM and keeps the
// fp32 tensors, so its backward rounds them again (the same values).
class GemmOperands {
 public:
  GemmOperands(const Tensor& a, const Tensor& b)
      : policy_(MixedPrecision::active()), layer_(current_mem_context().layer) {
    a_ = cast(a, Operand::input, Tape::active() != nullptr);
    b_ = cast(b, Operand::weight, Tape::active() != nullptr);
  }
  const Tensor& a() const { return a_; }
  const Tensor& b() const { return b_; }
  // What the backward needs: drops the copies a tf32 backward makes again.
  GemmOperands kept_for_backward() const {
    GemmOperands kept = *this;
    if (policy_ && policy_->precision() == Precision::tf32) kept.a_ = kept.b_ = Tensor();
    return kept;
  }
  // In the backward: the operands (given the fp32 ones the tape kept) and
  // the output's gradient as the backward GEMMs multiply it.
  Tensor a_or(const Tensor& a) const { return a_.defined() ? a_ : cast(a, Operand::input, false); }
  Tensor b_or(const Tensor& b) const { return b_.defined() ? b_ : cast(b, Operand::weight, false); }
  Tensor grad_output(const Tensor& dy) const { return cast(dy, Operand::grad_output, true); }
  const MixedPrecision* policy() const { return policy_; }

 private:
  Tensor cast(const Tensor& t, Operand o, bool training) const {
    return policy_ ? policy_->operand(t, o, layer_, training) : t;
  }
  MixedPrecision* policy_;
  std::string layer_;
  Tensor a_, b_;
};

}  // namespace

Var matmul(const Var& a, const Var& b, bool trans_a, bool trans_b) {
  const bool grad = needs_grad({&a, &b});
  const ActivationWidth width;
  const GemmOperands in(a.value(), b.value());
  Var y = activation(dispatch::matmul(in.a(), in.b(), trans_a, trans_b), grad);
  if (grad) {
    record([a, b, y, trans_a, trans_b, in = in.kept_for_backward()]() mutable {
      if (!y.grad().defined()) return;
      cpu::MatmulGrads g = dispatch::matmul_backward(in.a_or(a.value()), in.b_or(b.value()), in.grad_output(y.grad()),
                                                     trans_a, trans_b, a.requires_grad(), b.requires_grad());
      if (g.da.defined()) a.accumulate(as_written(g.da, in.policy()));
      if (g.db.defined()) b.accumulate(as_written(g.db, in.policy()));
    });
  }
  return y;
}

// One tape entry, not matmul + bias_add: the product before the bias is a
// temporary instead of an activation the tape keeps.
Var linear(const Var& x, const Var& w, const Var& b) {
  const bool grad = needs_grad({&x, &w, &b});
  const ActivationWidth width;
  const GemmOperands in(x.value(), w.value());
  Tensor product = dispatch::matmul(in.a(), in.b(), false, true);  // (N,out)
  Var y = activation(b.defined() ? dispatch::bias_add(product, b.value()) : product, grad);
  if (grad) {
    record([x, w, b, y, in = in.kept_for_backward()]() mutable {
      if (!y.grad().defined()) return;
      // The bias gradient comes from the same (rounded) gradient as the GEMMs.
      const Tensor dy = in.grad_output(y.grad());
      cpu::MatmulGrads g = dispatch::matmul_backward(in.a_or(x.value()), in.b_or(w.value()), dy, false, true,
                                                     x.requires_grad(), w.requires_grad());
      if (g.da.defined()) x.accumulate(as_written(g.da, in.policy()));
      if (g.db.defined()) w.accumulate(as_written(g.db, in.policy()));
      if (b.requires_grad()) b.accumulate(as_written(dispatch::bias_add_backward(dy), in.policy()));
    });
  }
  return y;
}

Var bias_add(const Var& x, const Var& b) {
  const bool grad = needs_grad({&x, &b});
  const ActivationWidth width;
  Var y = activation(dispatch::bias_add(x.value(), b.value()), grad);
  if (grad) {
    record([x, b, y, policy = MixedPrecision::active()]() mutable {
      if (!y.grad().defined()) return;
      if (b.requires_grad()) b.accumulate(as_written(dispatch::bias_add_backward(y.grad()), policy));
      // dx = dy: hand over the tensor (passed through, not written by a
      // kernel: nothing to round); y's gradient is consumed already.
      x.accumulate(y.grad());
    });
  }
  return y;
}

Var bias_relu(const Var& x, const Var& b) {
  const bool grad = needs_grad({&x, &b});
  const ActivationWidth width;
  Var y = activation(dispatch::bias_relu(x.value(), b.value()), grad);
  if (grad) {
    record([x, b, y, policy = MixedPrecision::active()]() mutable {
      if (!y.grad().defined()) return;
      // The ReLU's mask from y (y > 0 where x + b > 0) and the bias's sum, one op.
      const cpu::BiasReluGrads g = dispatch::bias_relu_backward(y.value(), y.grad());
      if (b.requires_grad()) b.accumulate(as_written(g.db, policy));
      x.accumulate(as_written(g.dx, policy));
    });
  }
  return y;
}

Var conv2d(const Var& x, const Var& w, const Var& b, const cpu::Conv2dParams& p) {
  const bool grad = needs_grad({&x, &w, &b});
  const ActivationWidth width;
  const GemmOperands in(x.value(), w.value());
  Var y = activation(dispatch::conv2d(in.a(), in.b(), b.defined() ? b.value() : Tensor(), p), grad);
  if (grad) {
    record([x, w, b, y, p, in = in.kept_for_backward()]() mutable {
      if (!y.grad().defined()) return;
      // The first layer's input (the images) needs no gradient: skip dx.
      cpu::Conv2dGrads g = dispatch::conv2d_backward(in.a_or(x.value()), in.b_or(w.value()), in.grad_output(y.grad()),
                                                     p, b.defined(), x.requires_grad());
      if (g.dx.defined()) x.accumulate(as_written(g.dx, in.policy()));
      w.accumulate(as_written(g.dw, in.policy()));
      if (b.defined()) b.accumulate(as_written(g.db, in.policy()));
    });
  }
  return y;
}

// Activations whose backward needs the input x.
template <class Forward, class Backward>
Var unary_from_input(const Var& x, Forward forward, Backward backward, bool picks_input_values) {
  const bool grad = needs_grad({&x});
  const ActivationWidth width;
  Var y = activation(forward(x.value()), grad, picks_input_values);
  if (grad) {
    record([x, y, backward]() mutable {
      if (y.grad().defined()) x.accumulate(backward(x.value(), y.grad()));
    });
  }
  return y;
}

// Activations whose backward is cheapest from the output y.
template <class Forward, class Backward>
Var unary_from_output(const Var& x, Forward forward, Backward backward) {
  const bool grad = needs_grad({&x});
  const ActivationWidth width;
  Var y = activation(forward(x.value()), grad);
  if (grad) {
    record([x, y, backward]() mutable {
      if (y.grad().defined()) x.accumulate(backward(y.value(), y.grad()));
    });
  }
  return y;
}

Var relu(const Var& x) {
  return unary_from_input(x, [](const Tensor& v) { return dispatch::relu(v); },
                          [](const Tensor& v, const Tensor& dy) { return dispatch::relu_backward(v, dy); }, true);
}

Var gelu(const Var& x) {
  return unary_from_input(x, [](const Tensor& v) { return dispatch::gelu(v); },
                          [](const Tensor& v, const Tensor& dy) { return dispatch::gelu_backward(v, dy); }, false);
}

Var sigmoid(const Var& x) {
  return unary_from_output(x, [](const Tensor& v) { return dispatch::sigmoid(v); },
                           [](const Tensor& y, const Tensor& dy) { return dispatch::sigmoid_backward(y, dy); });
}

Var tanh(const Var& x) {
  return unary_from_output(x, [](const Tensor& v) { return dispatch::tanh(v); },
                           [](const Tensor& y, const Tensor& dy) { return dispatch::tanh_backward(y, dy); });
}

Var max_pool2d(const Var& x, const cpu::Pool2dParams& p) {
  const bool grad = needs_grad({&x});
  const ActivationWidth width;
  cpu::MaxPoolResult r = dispatch::max_pool2d(x.value(), p);
  Var y = activation(r.y, grad, true);
  if (grad) {
    // The CPU keeps the winners' indices; a device finds them again from x.
    record([x, y, argmax = r.argmax, p]() mutable {
      if (y.grad().defined())
        x.accumulate(dispatch::max_pool2d_backward(x.value(), {y.value(), argmax}, y.grad(), p));
    });
  }
  return y;
}

Var avg_pool2d(const Var& x, const cpu::Pool2dParams& p) {
  const bool grad = needs_grad({&x});
  const ActivationWidth width;
  Var y = activation(dispatch::avg_pool2d(x.value(), p), grad);
  if (grad) {
    record([x, y, p]() mutable {
      if (y.grad().defined()) x.accumulate(dispatch::avg_pool2d_backward(y.grad(), x.shape(), p));
    });
  }
  return y;
}

Var flatten(const Var& x) {
  WN_CHECK(x.value().rank() >= 2, "flatten: needs (N, ...), got ", x.value().describe());
  const bool grad = needs_grad({&x});
  Var y = output(x.value().reshape({x.shape()[0], -1}), grad);
  if (grad) {
    record([x, y]() mutable {
      if (y.grad().defined()) x.accumulate(y.grad().reshape(x.shape()));
    });
  }
  return y;
}

Var dropout(const Var& x, double p, const dispatch::DropoutSeed& seed, bool training) {
  if (!training || p == 0.0) return x;
  const bool grad = needs_grad({&x});
  const ActivationWidth width;
  cpu::DropoutResult r = dispatch::dropout(x.value(), p, seed);
  Var y = activation(r.y, grad);
  if (grad) {
    record([x, y, mask = r.mask]() mutable {
      if (y.grad().defined()) x.accumulate(dispatch::dropout_backward(y.grad(), mask));
    });
  }
  return y;
}

Var softmax_cross_entropy(const Var& logits, const Tensor& labels, Tensor* probs, Tensor* row_loss) {
  const bool grad = needs_grad({&logits});
  cpu::SoftmaxCrossEntropy r = dispatch::softmax_cross_entropy(logits.value(), labels);
  if (probs) *probs = r.probs;
  if (row_loss) *row_loss = r.row_loss;
  Var loss = output(Tensor::full({1}, r.loss, logits.value().dtype()), grad);
  if (grad) {
    record([logits, loss, labels, p = r.probs]() mutable {
      if (!loss.grad().defined()) return;
      logits.accumulate(dispatch::softmax_cross_entropy_backward(p, labels, loss.grad().item(0)));
    });
  }
  return loss;
}

}  // namespace warpnet::ag
