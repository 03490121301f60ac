// softmax and the fused softmax + cross-entropy: against the textbook
// formula in double, at extreme logits, gradients against central
// differences, and the label errors.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "cpu/ops.hpp"
#include "op_test_util.hpp"

using namespace warpnet;
using namespace warpnet::test;

namespace {

Tensor random_labels(int64_t n, int64_t classes, Rng& rng) {
  Tensor labels = Tensor::empty({n}, DType::i32);
  for (int64_t i = 0; i < n; ++i) labels.set(i, double(rng.below(uint64_t(classes))));
  return labels;
}

// Textbook softmax in long double, safe for |logits| of a few tens only.
struct NaiveSoftmax {
  Tensor probs;
  Tensor row_loss;  // (N) f64: log Σ exp − the label's logit
  double loss;
};
NaiveSoftmax naive_softmax(const Tensor& logits, const Tensor& labels) {
  const int64_t n = logits.dim(0), c = logits.dim(1);
  NaiveSoftmax out{Tensor::empty(logits.shape(), DType::f64), Tensor::empty({n}, DType::f64), 0.0};
  for (int64_t i = 0; i < n; ++i) {
    long double sum = 0;
    for (int64_t j = 0; j < c; ++j) sum += std::exp(static_cast<long double>(logits.item(i * c + j)));
    for (int64_t j = 0; j < c; ++j) out.probs.set(i * c + j, double(std::exp((long double)logits.item(i * c + j)) / sum));
    out.row_loss.set(i, double(std::log(sum) - (long double)logits.item(i * c + int64_t(labels.item(i)))));
    out.loss -= double(std::log(out.probs.item(i * c + int64_t(labels.item(i)))));
  }
  out.loss /= double(n);
  return out;
}

}  // namespace

TEST_CASE("softmax_cross_entropy matches the textbook formula") {
  const uint64_t seed = 5001;
  CAPTURE(seed);
  Rng rng(seed);
  struct Size {
    int64_t n, c;
  };
  for (DType dtype : {DType::f32, DType::f64}) {
    for (const Size& s : {Size{1, 1}, Size{7, 10}, Size{33, 3}}) {
      CAPTURE(s.n);
      CAPTURE(s.c);
      const Tensor logits = uniform_tensor({s.n, s.c}, dtype, rng, -8.0, 8.0);
      const Tensor labels = random_labels(s.n, s.c, rng);
      const NaiveSoftmax want = naive_softmax(logits, labels);
      const cpu::SoftmaxCrossEntropy got = cpu::softmax_cross_entropy(logits, labels);
      // The loss is accumulated in double from the given (possibly f32)
      // logits: only double rounding remains, ~C·2^-53 relative per row.
      CHECK(got.loss == doctest::Approx(want.loss).epsilon(1e-12));
      // Probabilities are computed in double (exp, a C-term sum, a product:
      // (C + 4)·2^-53 relative) and rounded once to dtype (u).
      const double u = unit_roundoff(dtype), rtol = u + double(s.c + 4) * 0x1.0p-53;
      check_close(got.probs, want.probs, 0.0, rtol, cat("probs ", name_of(dtype)));
      check_equal(cpu::softmax(logits), got.probs, cat("softmax equals the fused op's probs ", name_of(dtype)));
      // Each row's loss (what the device kernels' loss output is checked
      // against) likewise in double and rounded once to dtype; absolutely,
      // log Σ exp of logits within ±8 errs by a few ulps of 10.3 in double.
      REQUIRE(got.row_loss.shape() == Shape{s.n});
      check_close(got.row_loss, want.row_loss, 16 * 16 * 0x1.0p-53, u + double(s.c + 4) * 0x1.0p-53,
                  cat("row_loss ", name_of(dtype)));
    }
  }
}

TEST_CASE("softmax_cross_entropy stays finite at extreme logits") {
  // exp(1000) overflows double: only the max-subtracted form survives.
  const Tensor logits = Tensor::from<float>({2, 3}, {1000.0f, 0.0f, -1000.0f, -1000.0f, -1000.0f, -1000.0f});
  const Tensor labels = Tensor::from<int32_t>({2}, {1, 2});
  const cpu::SoftmaxCrossEntropy out = cpu::softmax_cross_entropy(logits, labels);
  // Row 0: loss = log(1 + e^-1000 + e^-2000) + 1000 − 0 = 1000.
  // Row 1: three equal logits, loss = log 3.
  CHECK(out.loss == doctest::Approx((1000.0 + std::log(3.0)) / 2).epsilon(1e-12));
  CHECK(out.probs.item(0) == 1.0f);
  CHECK(out.probs.item(2) == 0.0f);
  CHECK(out.probs.item(4) == doctest::Approx(1.0 / 3.0).epsilon(1e-7));
}

TEST_CASE("softmax_cross_entropy keeps small differences between huge logits") {
  // Two equal logits of 1e17 or 1e30: log 2, whatever their size (the max
  // added back before the label's logit was subtracted gave 0). A difference
  // of 16 in logits near 1e7 (fp32's spacing there is 1): log(1 + e^-16).
  const Tensor logits = Tensor::from<float>({3, 2}, {1e17f, 1e17f, 1e30f, 1e30f, 1e7f, 9999984.0f});
  const Tensor labels = Tensor::from<int32_t>({3}, {0, 1, 0});
  const cpu::SoftmaxCrossEntropy out = cpu::softmax_cross_entropy(logits, labels);
  CHECK(out.row_loss.item(0) == doctest::Approx(std::log(2.0)).epsilon(1e-7));
  CHECK(out.row_loss.item(1) == doctest::Approx(std::log(2.0)).epsilon(1e-7));
  // Relative to the loss itself (scale 0): Approx's default adds 1 to the
  // scale, and 1e-6 of 1 would pass a loss of 0, the bug this guards against.
  CHECK(out.row_loss.item(2) == doctest::Approx(std::log1p(std::exp(-16.0))).epsilon(1e-6).scale(0));
}

TEST_CASE("softmax_cross_entropy_backward matches central differences") {
  const uint64_t seed = 5002;
  CAPTURE(seed);
  Rng rng(seed);
  Tensor logits = uniform_tensor({5, 7}, DType::f64, rng, -3.0, 3.0);
  const Tensor labels = random_labels(5, 7, rng);
  const double dloss = 0.7;  // not 1, so the scaling is exercised
  const cpu::SoftmaxCrossEntropy fwd = cpu::softmax_cross_entropy(logits, labels);
  const Tensor dlogits = cpu::softmax_cross_entropy_backward(fwd.probs, labels, dloss);
  check_gradient("dlogits", logits, dlogits,
                 [&] { return dloss * cpu::softmax_cross_entropy(logits, labels).loss; });
}

TEST_CASE("softmax_cross_entropy errors name the label and the range") {
  const Tensor logits = Tensor::zeros({5, 10});
  Tensor labels = Tensor::zeros({5}, DType::i32);
  labels.set(3, 12);
  CHECK_THROWS_WITH_AS(cpu::softmax_cross_entropy(logits, labels),
                       "softmax_cross_entropy: label 12 at row 3 is out of range [0,10)", Error);
  labels.set(3, -1);
  CHECK_THROWS_WITH_AS(cpu::softmax_cross_entropy_backward(logits, labels),
                       "softmax_cross_entropy_backward: label -1 at row 3 is out of range [0,10)", Error);
  CHECK_THROWS_WITH_AS(cpu::softmax_cross_entropy(logits, Tensor::zeros({4}, DType::i32)),
                       "softmax_cross_entropy: logits are (5,10) but labels are (4): expected (5)", Error);
  CHECK_THROWS_WITH_AS(cpu::softmax_cross_entropy(logits, Tensor::zeros({5})),
                       "softmax_cross_entropy: labels must be i32, got f32 (5)", Error);
  CHECK_THROWS_WITH_AS(cpu::softmax(Tensor::zeros({2, 3, 4})), "softmax: logits must be 2-D (N,C), got f32 (2,3,4)",
                       Error);
}
