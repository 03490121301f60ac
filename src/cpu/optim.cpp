// The optimizer updates, one element at a time, in place: the arithmetic of
// nn::Sgd::step and nn::Adam::step (src/nn/optim.cpp), which call these, and
// the double-precision reference of the device kernels (src/device/ops/optim.cpp).
// One formula for both, so the CPU trainer and the GPU kernels cannot drift
// apart. The hyperparameters arrive as doubles and are rounded to the tensors'
// type once, as the loop always did; every element is computed in that type.
#include <cmath>
#include <initializer_list>
#include <utility>

#include "core/tensor.hpp"
#include "cpu/checks_impl.hpp"
#include "cpu/ops.hpp"

namespace warpnet::cpu {

namespace {

// w and every slot: f32/f64, contiguous, one dtype, one shape.
void check_slots(const char* op, const Tensor& w, std::initializer_list<std::pair<const char*, const Tensor*>> slots) {
  require_float_input(op, "w", w);
  for (const auto& [name, t] : slots) {
    require_float_input(op, name, *t);
    require_same_dtype(op, "w", w, name, *t);
    require_same_shape(op, "w", w, name, *t);
  }
}

}  // namespace

// w, v, g: same shape. v ← μ·v + g + wd·w;  w ← w − lr·v.
void sgd_momentum_update(Tensor& w, Tensor& v, const Tensor& g, double lr, double momentum, double weight_decay) {
  check_slots("sgd_momentum_update", w, {{"v", &v}, {"g", &g}});
  dispatch_float(w.dtype(), "sgd_momentum_update", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    T* pw = w.data<T>();
    T* pv = v.data<T>();
    const T* pg = g.data<T>();
    const T mu = T(momentum), wd = T(weight_decay), rate = T(lr);
    const int64_t n = w.numel();
    for (int64_t j = 0; j < n; ++j) {
      pv[j] = mu * pv[j] + pg[j] + wd * pw[j];
      pw[j] -= rate * pv[j];
    }
  });
}

// w, m, v, g: same shape. m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²;
// w ← w − α·m / (√v + ε̂), with α and ε̂ the bias-corrected step size and epsilon.
void adam_update(Tensor& w, Tensor& m, Tensor& v, const Tensor& g, double step_size, double beta1, double beta2,
                 double eps_hat) {
  check_slots("adam_update", w, {{"m", &m}, {"v", &v}, {"g", &g}});
  dispatch_float(w.dtype(), "adam_update", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    T* pw = w.data<T>();
    T* pm = m.data<T>();
    T* pv = v.data<T>();
    const T* pg = g.data<T>();
    const T b1 = T(beta1), b2 = T(beta2), a = T(step_size), e = T(eps_hat);
    const int64_t n = w.numel();
    for (int64_t j = 0; j < n; ++j) {
      pm[j] = b1 * pm[j] + (T(1) - b1) * pg[j];
      pv[j] = b2 * pv[j] + (T(1) - b2) * pg[j] * pg[j];
      pw[j] -= a * pm[j] / (std::sqrt(pv[j]) + e);
    }
  });
}

}  // namespace warpnet::cpu
