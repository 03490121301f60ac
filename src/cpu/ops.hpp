// The CPU reference ops, forward and backward, on Eigen. Every op accepts f32
// and f64 tensors (f64 so gradients can be checked by finite differences in
// double); inputs must be contiguous. Each backward sits beside its forward.
#pragma once
#include <cstdint>

#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace warpnet::cpu {

// Threads used by every op (OpenMP and Eigen). 0 means all cores. The
// team also flushes denormals to zero (why: parallel.cpp).
void set_num_threads(int threads);
int num_threads();

// ---- matmul -------------------------------------------------------------
// The problem sizes of op(A)·op(B) for a: (M,K), or (K,M) when trans_a, and
// b: (K,N), or (N,K) when trans_b. Throws naming `op` and the shapes when
// they are not f32/f64 matrices of one dtype with equal inner dimensions.
struct MatmulDims {
  int64_t m, n, k;
};
MatmulDims matmul_dims(const char* op, const Tensor& a, const Tensor& b, bool trans_a, bool trans_b);

// C = op(A) · op(B), op(X) = X or Xᵀ.  A: (M,K), or (K,M) when trans_a.
// B: (K,N), or (N,K) when trans_b.  C: (M,N).
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false);
// C = alpha · op(A)·op(B) + beta · C, into an existing contiguous C.
void matmul_into(const Tensor& a, const Tensor& b, Tensor& c, bool trans_a, bool trans_b, double alpha = 1.0,
                 double beta = 0.0);
struct MatmulGrads {
  Tensor da, db;  // shaped like a and b
};
// need_da / need_db false leave that gradient undefined and skip its product
// (the first layer's input needs none).
MatmulGrads matmul_backward(const Tensor& a, const Tensor& b, const Tensor& dc, bool trans_a = false,
                            bool trans_b = false, bool need_da = true, bool need_db = true);

// ---- bias ---------------------------------------------------------------
// x: (N,C) or (N,C,H,W); b: (C). y = x + b broadcast along axis 1.
Tensor bias_add(const Tensor& x, const Tensor& b);
// db(C) = Σ dy over every axis but 1.
Tensor bias_add_backward(const Tensor& dy);
// The backward of y = relu(x + b) from its output: dx = dy where y > 0
// (where x + b > 0), else 0; db = bias_add_backward(dx).
struct BiasReluGrads {
  Tensor dx, db;
};
BiasReluGrads bias_relu_backward(const Tensor& y, const Tensor& dy);

// dst += src elementwise, in place; one shape and dtype (gradients accumulating).
void add_into(Tensor& dst, const Tensor& src);

// ---- activations (elementwise, any shape) --------------------------------
Tensor relu(const Tensor& x);
Tensor relu_backward(const Tensor& x, const Tensor& dy);
// GELU, tanh form (PyTorch's approximate='tanh'): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
Tensor gelu(const Tensor& x);
Tensor gelu_backward(const Tensor& x, const Tensor& dy);
Tensor sigmoid(const Tensor& x);
Tensor sigmoid_backward(const Tensor& y, const Tensor& dy);  // y = sigmoid(x)
Tensor tanh(const Tensor& x);
Tensor tanh_backward(const Tensor& y, const Tensor& dy);  // y = tanh(x)

// ---- convolution ----------------------------------------------------------
struct Conv2dParams {
  int stride = 1;
  int padding = 0;
  int dilation = 1;
};
// Output extent along one axis.
int64_t conv_out_size(int64_t in, int64_t kernel, const Conv2dParams& p);
// x: (N,C,H,W), w: (K,C,R,S), bias: (K) or undefined. y: (N,K,P,Q).
// im2col + Eigen GEMM, parallel over images.
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p);
// The same result by the seven nested loops of the definition: the reference.
Tensor conv2d_direct(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p);
struct Conv2dGrads {
  Tensor dx, dw, db;  // db undefined when has_bias is false, dx when needs_dx is false
};
// needs_dx = false skips dx: a network's first layer has no use for it, and
// it is 40% of that layer's backward time in LeNet-5.
Conv2dGrads conv2d_backward(const Tensor& x, const Tensor& w, const Tensor& dy, const Conv2dParams& p,
                            bool has_bias, bool needs_dx = true);

// ---- pooling --------------------------------------------------------------
struct Pool2dParams {
  int kernel = 2;
  int stride = 2;
  int padding = 0;
};
struct MaxPoolResult {
  Tensor y;       // (N,C,P,Q)
  Tensor argmax;  // i32 (N,C,P,Q): flat index into the H·W plane of the winner
};
MaxPoolResult max_pool2d(const Tensor& x, const Pool2dParams& p);
Tensor max_pool2d_backward(const Tensor& dy, const Tensor& argmax, const Shape& x_shape);
// Average over the window; padded positions count as zeros (count_include_pad).
Tensor avg_pool2d(const Tensor& x, const Pool2dParams& p);
Tensor avg_pool2d_backward(const Tensor& dy, const Shape& x_shape, const Pool2dParams& p);

// ---- softmax + cross-entropy (fused, numerically stable) -----------------
// logits: (N,C); labels: i32 (N) with values in [0,C).
struct SoftmaxCrossEntropy {
  double loss = 0;  // mean over the batch
  Tensor probs;     // (N,C) softmax, kept for backward
  Tensor row_loss;  // (N) each row's loss, logits' dtype: what `loss` averages
};
SoftmaxCrossEntropy softmax_cross_entropy(const Tensor& logits, const Tensor& labels);
// dlogits = dloss · (probs − onehot(labels)) / N.
Tensor softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels, double dloss = 1.0);
Tensor softmax(const Tensor& logits);  // (N,C), rows sum to 1

// ---- dropout (inverted: kept values are scaled by 1/(1−p)) ----------------
struct DropoutResult {
  Tensor y;
  Tensor mask;  // same dtype as x: 0 or 1/(1−p)
};
// Element i (flat) is kept iff counter_hash(seed, i) >= floor(p·2^32)
// (kernels/common/counter_hash.hpp): the device kernel's mask, bit for bit.
DropoutResult dropout(const Tensor& x, double p, uint64_t seed);
// The same with one seed drawn from `rng` (none when p = 0).
DropoutResult dropout(const Tensor& x, double p, Rng& rng);
// A seed as the dropout kernel reads it from device memory: its 64 bits in
// an i32 (2) tensor, low word first; and back.
Tensor dropout_seed_words(uint64_t seed);
uint64_t dropout_seed_of(const Tensor& words);
Tensor dropout_backward(const Tensor& dy, const Tensor& mask);

// ---- optimizer updates (in place, element by element; src/cpu/optim.cpp) ---
// The arithmetic of nn::Sgd::step and nn::Adam::step, and the reference of
// the device kernels: w and its slots share one shape and dtype, g too.
// v ← μ·v + g + wd·w;  w ← w − lr·v.
void sgd_momentum_update(Tensor& w, Tensor& v, const Tensor& g, double lr, double momentum, double weight_decay);
// m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²;  w ← w − step_size·m / (√v + eps_hat).
// step_size and eps_hat carry the bias corrections (folded as nn::Adam::step does).
void adam_update(Tensor& w, Tensor& m, Tensor& v, const Tensor& g, double step_size, double beta1, double beta2,
                 double eps_hat);

}  // namespace warpnet::cpu
