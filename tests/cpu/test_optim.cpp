// The optimizer updates (cpu::sgd_momentum_update, cpu::adam_update): the
// textbook formulas element by element in the tensors' own type (what
// nn::Sgd and nn::Adam, which call them, always computed), bit for bit in
// f32 and f64, and the shape and dtype checks.
#include <doctest/doctest.h>

#include <cmath>

#include "cpu/ops.hpp"
#include "op_test_util.hpp"

using namespace warpnet;
using namespace warpnet::test;

namespace {

// The update loops as nn/optim.cpp wrote them before they moved to src/cpu.
template <class T>
void sgd_loop(T* w, T* v, const T* g, int64_t n, double lr, double momentum, double wd) {
  const T mu = T(momentum), d = T(wd), rate = T(lr);
  for (int64_t j = 0; j < n; ++j) {
    v[j] = mu * v[j] + g[j] + d * w[j];
    w[j] -= rate * v[j];
  }
}
template <class T>
void adam_loop(T* w, T* m, T* v, const T* g, int64_t n, double a, double beta1, double beta2, double e) {
  const T b1 = T(beta1), b2 = T(beta2), alpha = T(a), eps = T(e);
  for (int64_t j = 0; j < n; ++j) {
    m[j] = b1 * m[j] + (T(1) - b1) * g[j];
    v[j] = b2 * v[j] + (T(1) - b2) * g[j] * g[j];
    w[j] -= alpha * m[j] / (std::sqrt(v[j]) + eps);
  }
}

template <class T>
void check_both_types(DType dtype, uint64_t seed) {
  Rng rng(seed);
  const Shape shape{3, 37};
  const Tensor w0 = uniform_tensor(shape, dtype, rng), g = uniform_tensor(shape, dtype, rng);
  const Tensor m0 = uniform_tensor(shape, dtype, rng, -0.1, 0.1), v0 = uniform_tensor(shape, dtype, rng, 0.0, 0.01);
  {
    Tensor w = w0.clone(), v = m0.clone(), w_want = w0.clone(), v_want = m0.clone();
    cpu::sgd_momentum_update(w, v, g, 0.05, 0.9, 5e-4);
    sgd_loop(w_want.data<T>(), v_want.data<T>(), g.data<T>(), w.numel(), 0.05, 0.9, 5e-4);
    check_equal(w, w_want, "sgd w");
    check_equal(v, v_want, "sgd v");
  }
  {
    Tensor w = w0.clone(), m = m0.clone(), v = v0.clone();
    Tensor w_want = w0.clone(), m_want = m0.clone(), v_want = v0.clone();
    cpu::adam_update(w, m, v, g, 3e-3, 0.9, 0.999, 1e-8);
    adam_loop(w_want.data<T>(), m_want.data<T>(), v_want.data<T>(), g.data<T>(), w.numel(), 3e-3, 0.9, 0.999, 1e-8);
    check_equal(w, w_want, "adam w");
    check_equal(m, m_want, "adam m");
    check_equal(v, v_want, "adam v");
  }
}

}  // namespace

TEST_CASE("sgd_momentum_update and adam_update are the optimizers' loops, bit for bit") {
  const uint64_t seed = 7101;
  CAPTURE(seed);
  check_both_types<float>(DType::f32, seed);
  check_both_types<double>(DType::f64, seed);
}

TEST_CASE("optimizer updates take the textbook first steps") {
  Tensor w = Tensor::from<float>({2}, {1.0f, -2.0f}), v = Tensor::zeros({2});
  const Tensor g = Tensor::from<float>({2}, {0.5f, 1.0f});
  cpu::sgd_momentum_update(w, v, g, 0.1, 0.9, 0.0);  // v = g; w -= 0.1·g
  CHECK(w.item(0) == doctest::Approx(0.95));
  CHECK(v.item(1) == doctest::Approx(1.0));
  // Adam's first step with the bias corrections folded in (step_size = lr,
  // ε̂ = ε·√(1−β2)) moves each weight by lr·sign(g).
  Tensor wa = Tensor::from<float>({2}, {1.0f, -2.0f}), m = Tensor::zeros({2}), va = Tensor::zeros({2});
  const double c1 = 1 - 0.9, c2 = 1 - 0.999;
  cpu::adam_update(wa, m, va, g, 0.01 * std::sqrt(c2) / c1, 0.9, 0.999, 1e-8 * std::sqrt(c2));
  CHECK(wa.item(0) == doctest::Approx(0.99).epsilon(1e-5));
  CHECK(wa.item(1) == doctest::Approx(-2.01).epsilon(1e-5));
}

TEST_CASE("optimizer updates reject slots of another shape or dtype") {
  Tensor w = Tensor::zeros({4}), v = Tensor::zeros({5}), g = Tensor::zeros({4});
  CHECK_THROWS_WITH_AS(cpu::sgd_momentum_update(w, v, g, 0.1, 0.9, 0.0),
                       doctest::Contains("sgd_momentum_update: w is (4) but v is (5)"), Error);
  Tensor m = Tensor::zeros({4}), v64 = Tensor::zeros({4}, DType::f64);
  CHECK_THROWS_WITH_AS(cpu::adam_update(w, m, v64, g, 0.1, 0.9, 0.999, 1e-8),
                       doctest::Contains("adam_update: w is f32 but v is f64"), Error);
}
