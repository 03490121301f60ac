// The tape: gradients of composed ops by finite differences in double, and
// accumulation when a value is used twice.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>

#include "autograd/functions.hpp"

using namespace warpnet;

namespace {

constexpr uint64_t kSeed = 20261130;

ag::Var random_var(const Shape& shape, Rng& rng, bool requires_grad = true) {
  Tensor t = Tensor::empty(shape, DType::f64);
  fill_uniform(t, rng, -1.0, 1.0);
  return ag::Var(t, requires_grad);
}

// Runs `build` forward on the tape, backward, and compares each input's
// gradient with a central difference of the loss. In double with h = 1e-6
// the truncation error is O(h²) ≈ 1e-12 and rounding ≈ 1e-16/h ≈ 1e-10, so
// 1e-6 relative (plus 1e-8 absolute) is a tolerance a wrong gradient cannot meet.
template <class Build>
void check_gradients(std::vector<ag::Var> inputs, Build build) {
  {
    ag::Tape tape;
    ag::TapeScope scope(tape);
    ag::Var loss = build(inputs);
    tape.backward(loss);
  }
  const double h = 1e-6;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Tensor& x = inputs[k].value();
    REQUIRE(inputs[k].grad().defined());
    int mismatches = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double saved = x.item(i);
      ag::NoGradScope off;
      x.set(i, saved + h);
      const double up = build(inputs).value().item(0);
      x.set(i, saved - h);
      const double down = build(inputs).value().item(0);
      x.set(i, saved);
      const double numeric = (up - down) / (2 * h);
      const double analytic = inputs[k].grad().item(i);
      if (std::abs(numeric - analytic) > 1e-6 * std::abs(numeric) + 1e-8 && mismatches++ < 5)
        std::printf("input %zu element %lld: analytic %.10g numeric %.10g\n", k, static_cast<long long>(i), analytic,
                    numeric);
    }
    CHECK(mismatches == 0);
  }
}

Tensor labels_of(std::vector<int32_t> values) {
  return Tensor::from<int32_t>({static_cast<int64_t>(values.size())}, values);
}

}  // namespace

TEST_CASE("a small convolutional network's gradients match finite differences") {
  std::printf("seed %llu\n", static_cast<unsigned long long>(kSeed));
  Rng rng(kSeed);
  // x (2,2,7,7) → conv 3×3 stride 2 pad 1 → (2,3,4,4) → tanh → max pool 2 →
  // (2,3,2,2) → flatten (2,12) → linear → (2,4) → softmax cross-entropy.
  std::vector<ag::Var> in{random_var({2, 2, 7, 7}, rng), random_var({3, 2, 3, 3}, rng), random_var({3}, rng),
                          random_var({4, 12}, rng), random_var({4}, rng)};
  const Tensor labels = labels_of({1, 3});
  check_gradients(in, [&](std::vector<ag::Var>& v) {
    ag::Var h = ag::conv2d(v[0], v[1], v[2], {2, 1, 1});
    h = ag::max_pool2d(ag::tanh(h), {2, 2, 0});
    h = ag::linear(ag::flatten(h), v[3], v[4]);
    return ag::softmax_cross_entropy(h, labels);
  });
}

TEST_CASE("an MLP with every activation: gradients match finite differences") {
  Rng rng(kSeed + 1);
  std::vector<ag::Var> in{random_var({3, 5}, rng), random_var({6, 5}, rng), random_var({6}, rng),
                          random_var({3, 6}, rng)};
  const Tensor labels = labels_of({0, 2, 1});
  check_gradients(in, [&](std::vector<ag::Var>& v) {
    ag::Var h = ag::linear(v[0], v[1], v[2]);
    h = ag::sigmoid(ag::gelu(h));
    h = ag::matmul(h, v[3], false, true);  // (3,6)·(3,6)ᵀ → (3,3)
    return ag::softmax_cross_entropy(h, labels);
  });
}

TEST_CASE("a ReLU folded into its layer (bias_relu, the product's value dropped): gradients match finite differences") {
  // What a folded Conv2d runs on a device (nn/layers.cpp): conv without its
  // bias, bias_relu, and the product's value freed, as no backward reads it.
  Rng rng(kSeed + 4);
  std::vector<ag::Var> in{random_var({2, 2, 6, 6}, rng), random_var({3, 2, 3, 3}, rng), random_var({3}, rng)};
  const Tensor labels = labels_of({1, 0});
  check_gradients(in, [&](std::vector<ag::Var>& v) {
    ag::Var product = ag::conv2d(v[0], v[1], ag::Var(), {1, 0, 1});  // (2,3,4,4)
    ag::Var y = ag::bias_relu(product, v[2]);
    product.drop_value();
    CHECK_FALSE(product.value().defined());
    CHECK(product.shape() == Shape{2, 3, 4, 4});  // kept for the gradient's shape check
    return ag::softmax_cross_entropy(ag::flatten(ag::avg_pool2d(y, {2, 2, 0})), labels);
  });
}

TEST_CASE("ReLU, bias_add and dropout (a fixed seed): gradients match finite differences") {
  Rng rng(kSeed + 5);
  std::vector<ag::Var> in{random_var({2, 3, 4, 4}, rng), random_var({3}, rng), random_var({4, 48}, rng)};
  const Tensor labels = labels_of({2, 0});
  const dispatch::DropoutSeed seed{77, {}};  // the same mask every call: the loss a fixed function of the inputs
  int64_t dropped = 0;
  check_gradients(in, [&](std::vector<ag::Var>& v) {
    const ag::Var kept = ag::relu(ag::bias_add(v[0], v[1]));  // (2,3,4,4)
    const ag::Var h = ag::dropout(kept, 0.25, seed, true);
    dropped = 0;
    for (int64_t i = 0; i < h.value().numel(); ++i) dropped += h.value().item(i) == 0 && kept.value().item(i) != 0;
    return ag::softmax_cross_entropy(ag::matmul(ag::flatten(h), v[2], false, true), labels);  // (2,48)·(4,48)ᵀ
  });
  CHECK(dropped > 0);  // the mask dropped some of the values the ReLU passed
}

TEST_CASE("a value used twice receives the sum of both gradients") {
  // h·hᵀ uses h as both operands: backward accumulates dA and dB into h.
  Rng rng(kSeed + 2);
  std::vector<ag::Var> in{random_var({3, 4}, rng), random_var({5, 4}, rng), random_var({5}, rng)};
  const Tensor labels = labels_of({2, 0, 1});
  check_gradients(in, [&](std::vector<ag::Var>& v) {
    ag::Var h = ag::linear(v[0], v[1], v[2]);  // (3,5)
    return ag::softmax_cross_entropy(ag::matmul(h, h, false, true), labels);
  });
}

TEST_CASE("nothing is recorded without a tape or without inputs that need gradients") {
  Rng rng(kSeed + 3);
  ag::Var x = random_var({2, 3}, rng);
  ag::Var w = random_var({3, 3}, rng, false);
  ag::Var y = ag::matmul(x, w);
  CHECK_FALSE(y.requires_grad());
  ag::Tape tape;
  ag::TapeScope scope(tape);
  ag::Var c = ag::matmul(ag::Var(x.value()), w);
  CHECK(tape.size() == 0);
  ag::Var z = ag::matmul(x, w);
  CHECK(z.requires_grad());
  CHECK(tape.size() == 1);
  CHECK_THROWS_WITH_AS(tape.backward(z), "backward: the loss must be a single value, got f64 (2,3)", Error);
}
