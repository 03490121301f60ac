#include "device/dispatch.hpp"

#include "device/backend.hpp"

namespace warpnet::dispatch {

namespace {
bool on_cpu(const Tensor& t) { return t.device() == Device::cpu; }
}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b) {
  return on_cpu(a) ? cpu::matmul(a, b, trans_a, trans_b) : device::matmul(a, b, trans_a, trans_b);
}
cpu::MatmulGrads matmul_backward(const Tensor& a, const Tensor& b, const Tensor& dc, bool trans_a, bool trans_b,
                                 bool need_da, bool need_db) {
  return on_cpu(a) ? cpu::matmul_backward(a, b, dc, trans_a, trans_b, need_da, need_db)
                   : device::matmul_backward(a, b, dc, trans_a, trans_b, need_da, need_db);
}

Tensor bias_add(const Tensor& x, const Tensor& b) { return on_cpu(x) ? cpu::bias_add(x, b) : device::bias_add(x, b); }
Tensor bias_relu(const Tensor& x, const Tensor& b) {
  return on_cpu(x) ? cpu::relu(cpu::bias_add(x, b)) : device::bias_relu(x, b);
}
Tensor bias_add_backward(const Tensor& dy) {
  return on_cpu(dy) ? cpu::bias_add_backward(dy) : device::bias_add_backward(dy);
}
cpu::BiasReluGrads bias_relu_backward(const Tensor& y, const Tensor& dy) {
  return on_cpu(dy) ? cpu::bias_relu_backward(y, dy) : device::bias_relu_backward(y, dy);
}

Tensor relu(const Tensor& x) { return on_cpu(x) ? cpu::relu(x) : device::relu(x); }
Tensor relu_backward(const Tensor& x, const Tensor& dy) {
  return on_cpu(x) ? cpu::relu_backward(x, dy) : device::relu_backward(x, dy);
}
Tensor gelu(const Tensor& x) { return on_cpu(x) ? cpu::gelu(x) : device::gelu(x); }
Tensor gelu_backward(const Tensor& x, const Tensor& dy) {
  return on_cpu(x) ? cpu::gelu_backward(x, dy) : device::gelu_backward(x, dy);
}
Tensor sigmoid(const Tensor& x) { return on_cpu(x) ? cpu::sigmoid(x) : device::sigmoid(x); }
Tensor sigmoid_backward(const Tensor& y, const Tensor& dy) {
  return on_cpu(y) ? cpu::sigmoid_backward(y, dy) : device::sigmoid_backward(y, dy);
}
Tensor tanh(const Tensor& x) { return on_cpu(x) ? cpu::tanh(x) : device::tanh(x); }
Tensor tanh_backward(const Tensor& y, const Tensor& dy) {
  return on_cpu(y) ? cpu::tanh_backward(y, dy) : device::tanh_backward(y, dy);
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const cpu::Conv2dParams& p) {
  return on_cpu(x) ? cpu::conv2d(x, w, bias, p) : device::conv2d(x, w, bias, p);
}
cpu::Conv2dGrads conv2d_backward(const Tensor& x, const Tensor& w, const Tensor& dy, const cpu::Conv2dParams& p,
                                 bool has_bias, bool needs_dx) {
  return on_cpu(x) ? cpu::conv2d_backward(x, w, dy, p, has_bias, needs_dx)
                   : device::conv2d_backward(x, w, dy, p, has_bias, needs_dx);
}

cpu::MaxPoolResult max_pool2d(const Tensor& x, const cpu::Pool2dParams& p) {
  if (on_cpu(x)) return cpu::max_pool2d(x, p);
  return {device::max_pool2d(x, p), Tensor()};
}
Tensor max_pool2d_backward(const Tensor& x, const cpu::MaxPoolResult& forward, const Tensor& dy,
                           const cpu::Pool2dParams& p) {
  return on_cpu(x) ? cpu::max_pool2d_backward(dy, forward.argmax, x.shape()) : device::max_pool2d_backward(x, dy, p);
}
Tensor avg_pool2d(const Tensor& x, const cpu::Pool2dParams& p) {
  return on_cpu(x) ? cpu::avg_pool2d(x, p) : device::avg_pool2d(x, p);
}
Tensor avg_pool2d_backward(const Tensor& dy, const Shape& x_shape, const cpu::Pool2dParams& p) {
  return on_cpu(dy) ? cpu::avg_pool2d_backward(dy, x_shape, p) : device::avg_pool2d_backward(dy, x_shape, p);
}

cpu::DropoutResult dropout(const Tensor& x, double p, const DropoutSeed& seed) {
  return on_cpu(x) ? cpu::dropout(x, p, seed.value) : device::dropout(x, p, seed.on_device);
}
Tensor dropout_backward(const Tensor& dy, const Tensor& mask) {
  return on_cpu(dy) ? cpu::dropout_backward(dy, mask) : device::dropout_backward(dy, mask);
}

cpu::SoftmaxCrossEntropy softmax_cross_entropy(const Tensor& logits, const Tensor& labels) {
  return on_cpu(logits) ? cpu::softmax_cross_entropy(logits, labels) : device::softmax_cross_entropy(logits, labels);
}
Tensor softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels, double dloss) {
  return on_cpu(probs) ? cpu::softmax_cross_entropy_backward(probs, labels, dloss)
                       : device::softmax_cross_entropy_backward(probs, labels, dloss);
}

void add_into(Tensor& dst, const Tensor& src) { on_cpu(dst) ? cpu::add_into(dst, src) : device::add_into(dst, src); }

void sgd_momentum_update(std::span<const std::array<Tensor*, 3>> params, const StepHyper& h) {
  if (params.empty()) return;
  if (!on_cpu(*params.front()[0])) return device::sgd_momentum_update(params, h.on_device);
  for (const auto& [w, v, g] : params) cpu::sgd_momentum_update(*w, *v, *g, h.values.at(0), h.values.at(1), h.values.at(2));
}
void adam_update(std::span<const std::array<Tensor*, 4>> params, const StepHyper& h) {
  if (params.empty()) return;
  if (!on_cpu(*params.front()[0])) return device::adam_update(params, h.on_device);
  for (const auto& [w, m, v, g] : params)
    cpu::adam_update(*w, *m, *v, *g, h.values.at(0), h.values.at(1), h.values.at(2), h.values.at(3));
}

}  // namespace warpnet::dispatch
