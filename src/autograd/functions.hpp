// Differentiable ops: each forward runs the op on the device its inputs
// live on (device/dispatch.hpp: the CPU reference, or the registry's kernels
// on emu and cuda) and records, right beside it, the backward that the chain
// rule asks for.
#pragma once
#include "autograd/tape.hpp"
#include "cpu/ops.hpp"
#include "device/dispatch.hpp"

namespace warpnet::ag {

// y = op(a)·op(b); a: (M,K), b: (K,N) (transposes as in cpu::matmul).
Var matmul(const Var& a, const Var& b, bool trans_a = false, bool trans_b = false);
// y = x·Wᵀ + b; x: (N,in), w: (out,in), b: (out) or undefined.
Var linear(const Var& x, const Var& w, const Var& b);
// x: (N,C,H,W), w: (K,C,R,S), b: (K) or undefined → (N,K,P,Q).
Var conv2d(const Var& x, const Var& w, const Var& b, const cpu::Conv2dParams& p);
Var bias_add(const Var& x, const Var& b);
// relu(bias_add(x, b)) as one op: the ReLU of a layer folded into it
// (nn::Sequential::fold_bias_relu). Its backward masks dy with y > 0, which
// is x + b > 0: the output alone tells where the gradient passes.
Var bias_relu(const Var& x, const Var& b);
Var relu(const Var& x);
Var gelu(const Var& x);
Var sigmoid(const Var& x);
Var tanh(const Var& x);
Var max_pool2d(const Var& x, const cpu::Pool2dParams& p);
Var avg_pool2d(const Var& x, const cpu::Pool2dParams& p);
// (N, ...) → (N, rest): a view, no copy.
Var flatten(const Var& x);
// Inverted dropout while training, with that seed; the identity otherwise.
Var dropout(const Var& x, double p, const dispatch::DropoutSeed& seed, bool training);
// Mean cross-entropy of softmax(logits) against labels; logits: (N,C),
// labels: i32 (N). Returns a one-element Var. `probs`, if given, receives the
// softmax (for accuracy without a second pass); `row_loss` each row's loss,
// where the logits are (what a captured graph's replay reads its loss from:
// while a step is captured the mean is not known, and the Var holds NaN).
Var softmax_cross_entropy(const Var& logits, const Tensor& labels, Tensor* probs = nullptr,
                          Tensor* row_loss = nullptr);

}  // namespace warpnet::ag
