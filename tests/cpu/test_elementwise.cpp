// bias_add and the activations: forwards against the formulas evaluated here
// in double, backwards against central differences.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <vector>

#include "cpu/ops.hpp"
#include "op_test_util.hpp"

using namespace warpnet;
using namespace warpnet::test;

namespace {

// Random values plus the ones that break careless formulas: ±0, tiny,
// saturating (|x| = 30) and overflowing (|x| = 1000, exp(1000) = inf).
Tensor activation_input(DType dtype, Rng& rng) {
  const std::vector<double> special{0.0, -0.0, 1e-3, -1e-3, 5.0, -5.0, 30.0, -30.0, 1000.0, -1000.0};
  Tensor x = uniform_tensor({3, 33}, dtype, rng, -4.0, 4.0);
  for (size_t i = 0; i < special.size(); ++i) x.set(int64_t(i), special[i]);
  return x;
}

double gelu_ref(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}
double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct Activation {
  const char* name;
  std::function<Tensor(const Tensor&)> forward;
  std::function<double(double)> reference;
  // gelu computes 0.5·x·(1 + tanh(u)): the ~u error of tanh is multiplied by
  // |x|, and 1 + tanh cancels for x << 0, so its error scales with |x|, not |y|.
  bool error_scales_with_x;
  // The backward as the framework calls it: relu and gelu take the input,
  // sigmoid and tanh the output they produced.
  std::function<Tensor(const Tensor& x, const Tensor& y, const Tensor& dy)> backward;
};

const std::vector<Activation>& activations() {
  static const std::vector<Activation> table{
      {"relu", [](const Tensor& x) { return cpu::relu(x); }, [](double x) { return x > 0 ? x : 0.0; }, false,
       [](const Tensor& x, const Tensor&, const Tensor& dy) { return cpu::relu_backward(x, dy); }},
      {"gelu", [](const Tensor& x) { return cpu::gelu(x); }, gelu_ref, true,
       [](const Tensor& x, const Tensor&, const Tensor& dy) { return cpu::gelu_backward(x, dy); }},
      {"sigmoid", [](const Tensor& x) { return cpu::sigmoid(x); }, sigmoid_ref, false,
       [](const Tensor&, const Tensor& y, const Tensor& dy) { return cpu::sigmoid_backward(y, dy); }},
      {"tanh", [](const Tensor& x) { return cpu::tanh(x); }, [](double x) { return std::tanh(x); }, false,
       [](const Tensor&, const Tensor& y, const Tensor& dy) { return cpu::tanh_backward(y, dy); }},
  };
  return table;
}

}  // namespace

TEST_CASE("activations match their formulas, extremes included") {
  const uint64_t seed = 3001;
  CAPTURE(seed);
  Rng rng(seed);
  for (DType dtype : {DType::f32, DType::f64}) {
    const Tensor x = activation_input(dtype, rng);
    for (const Activation& act : activations()) {
      INFO("case: ", std::string(act.name));
      const Tensor y = act.forward(x);
      Tensor want = Tensor::empty(x.shape(), DType::f64);
      for (int64_t i = 0; i < x.numel(); ++i) want.set(i, act.reference(x.item(i)));
      // Each is a few correctly rounded operations around a libm call good to
      // an ulp or two: 8u relative to the output (or to |x| for gelu).
      const double u = unit_roundoff(dtype);
      const auto tol = [&](int64_t i) {
        return 8 * u * (std::abs(want.item(i)) + (act.error_scales_with_x ? std::abs(x.item(i)) : 0.0));
      };
      check_close(y, want, tol, cat(act.name, " ", name_of(dtype)));
    }
  }
}

TEST_CASE("activation backwards match central differences") {
  const uint64_t seed = 3002;
  CAPTURE(seed);
  Rng rng(seed);
  for (const Activation& act : activations()) {
    INFO("case: ", std::string(act.name));
    Tensor x = uniform_tensor({7, 5}, DType::f64, rng, -3.0, 3.0);
    // relu has a kink at 0: keep every input 1e-3 away, a thousand steps h.
    push_away_from_zero(x, 1e-3);
    const Tensor g = uniform_tensor(x.shape(), DType::f64, rng);
    const Tensor dx = act.backward(x, act.forward(x), g);
    check_gradient(act.name, x, dx, [&] { return dot(act.forward(x), g); });
  }
}

TEST_CASE("bias_add broadcasts along axis 1 for ranks 2, 3 and 4") {
  const uint64_t seed = 3003;
  CAPTURE(seed);
  Rng rng(seed);
  for (DType dtype : {DType::f32, DType::f64}) {
    for (const Shape& shape : {Shape{7, 5}, Shape{3, 4, 33}, Shape{2, 3, 5, 7}, Shape{1, 1}}) {
      CAPTURE(shape);
      const Tensor x = uniform_tensor(shape, dtype, rng);
      const Tensor b = uniform_tensor({shape[1]}, dtype, rng);
      const Tensor y = cpu::bias_add(x, b);
      const int64_t channels = shape[1], spatial = shape.numel() / (shape[0] * channels);
      Tensor want = Tensor::empty(shape, dtype);
      for (int64_t i = 0; i < x.numel(); ++i) want.set(i, x.item(i) + b.item((i / spatial) % channels));
      // One addition in the same dtype on both sides: bit for bit.
      check_equal(y, want, cat("bias_add ", name_of(dtype)));

      const Tensor dy = uniform_tensor(shape, dtype, rng);
      Tensor db_want = Tensor::zeros({channels}, DType::f64);
      double abs_max = 0;
      for (int64_t i = 0; i < dy.numel(); ++i) {
        const int64_t ch = (i / spatial) % channels;
        db_want.set(ch, db_want.item(ch) + dy.item(i));
        abs_max = std::max(abs_max, std::abs(dy.item(i)));
      }
      // Summed in double, rounded once to dtype: u·|sum|, plus the double
      // sum's own error (n·2^-53·n·max|dy|, below 1e-12 here).
      const double u = unit_roundoff(dtype);
      check_close(cpu::bias_add_backward(dy), db_want,
                  [&](int64_t i) { return u * std::abs(db_want.item(i)) + 1e-12 * abs_max; },
                  cat("bias_add_backward ", name_of(dtype)));
    }
  }
}

TEST_CASE("bias_add_backward matches central differences") {
  const uint64_t seed = 3004;
  CAPTURE(seed);
  Rng rng(seed);
  for (const Shape& shape : {Shape{7, 5}, Shape{2, 3, 5, 7}}) {
    CAPTURE(shape);
    Tensor x = uniform_tensor(shape, DType::f64, rng);
    Tensor b = uniform_tensor({shape[1]}, DType::f64, rng);
    const Tensor g = uniform_tensor(shape, DType::f64, rng);
    const auto loss = [&] { return dot(cpu::bias_add(x, b), g); };
    check_gradient("db", b, cpu::bias_add_backward(g), loss);
    check_gradient("dx (the identity)", x, g, loss);
  }
}

TEST_CASE("ReLU passes NaN through, and the gradient at a NaN, as PyTorch's do; -0 becomes +0") {
  const Tensor y = cpu::relu(Tensor::from<float>({4}, {NAN, -1.0f, -0.0f, 2.0f}));
  CHECK(std::isnan(y.item(0)));
  CHECK(y.item(1) == 0.0);
  CHECK_FALSE(std::signbit(y.item(2)));
  CHECK(y.item(3) == 2.0);
  // PyTorch's threshold_backward zeroes where x <= 0, which a NaN is not.
  const Tensor dx = cpu::relu_backward(Tensor::from<float>({3}, {NAN, 0.0f, -0.0f}), Tensor::from<float>({3}, {5.0f, 5.0f, 5.0f}));
  CHECK(dx.item(0) == 5.0);
  CHECK(dx.item(1) == 0.0);  // the kink takes 0
  CHECK(dx.item(2) == 0.0);
}

TEST_CASE("GELU (tanh form) at the ends of the line: 0 and x, slopes 0 and 1, never NaN") {
  const float inf = INFINITY;
  const Tensor x = Tensor::from<float>({6}, {-inf, -1e20f, -20.0f, 20.0f, 1e20f, inf});
  const Tensor y = cpu::gelu(x);
  for (int i : {0, 1, 2}) CHECK(y.item(i) == 0.0);
  CHECK(y.item(3) == 20.0);
  CHECK(y.item(4) == 1e20f);
  CHECK(y.item(5) == inf);
  const Tensor dx = cpu::gelu_backward(x, Tensor::full({6}, 1.0, DType::f32));
  for (int i : {0, 1, 2}) CHECK(dx.item(i) == 0.0);
  for (int i : {3, 4, 5}) CHECK(dx.item(i) == 1.0);
  // The tanh form, PyTorch's approximate='tanh' (not its default erf form: -0.0040497 at -3).
  CHECK(cpu::gelu(Tensor::from<double>({1}, {-3.0})).item(0) == doctest::Approx(-0.0036373920817).epsilon(1e-9));
}

TEST_CASE("elementwise errors name the shapes") {
  CHECK_THROWS_WITH_AS(cpu::bias_add(Tensor::zeros({2, 3, 4}), Tensor::zeros({4})),
                       "bias_add: x is (2,3,4) but b is (4): expected (3)", Error);
  CHECK_THROWS_WITH_AS(cpu::bias_add(Tensor::zeros({5}), Tensor::zeros({5})),
                       "bias_add: x must have a channel axis (N,C,...), got f32 (5)", Error);
  CHECK_THROWS_WITH_AS(cpu::relu_backward(Tensor::zeros({2, 3}), Tensor::zeros({3, 2})),
                       "relu_backward: x is (2,3) but dy is (3,2): shapes differ", Error);
  CHECK_THROWS_WITH_AS(cpu::gelu(Tensor::zeros({2}, DType::u8)), "gelu: x must be f32 or f64, got u8 (2)", Error);
  CHECK_THROWS_WITH_AS(cpu::tanh(Tensor()), "tanh: x is an undefined tensor", Error);
}
