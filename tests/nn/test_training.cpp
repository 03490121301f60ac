// Training end to end on synthetic sets, optimizers by hand, and the memory
// split of a training step.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "cpu/ops.hpp"
#include "datasets/synthetic.hpp"
#include "nn/trainer.hpp"
#include "tests/thread_count_scope.hpp"

using namespace warpnet;

TEST_CASE("an MLP learns the spirals") {
  const test::ThreadCountScope thread_count(1);
  const data::Dataset train = data::make_spirals(1500, 3, 11);
  const data::Dataset test = data::make_spirals(300, 3, 12);
  nn::TrainOptions o;
  o.model = "mlp";
  o.epochs = 30;
  o.batch_size = 32;
  o.lr = 0.01;
  o.seed = 5;
  nn::Trainer trainer(o, train, test);
  nn::EvalResult before = nn::evaluate(trainer.model(), test, 256);
  std::vector<nn::EpochStats> history = trainer.run();
  std::printf("spirals: test accuracy %.3f before, %.3f after 30 epochs\n", before.accuracy,
              history.back().test_accuracy);
  // Three classes: chance is 1/3. Three interleaved arms need a nonlinear
  // boundary; a trained 128-64 MLP separates them almost perfectly.
  CHECK(before.accuracy < 0.6);
  CHECK(history.back().test_accuracy > 0.9);
  CHECK(history.back().train_loss < history.front().train_loss);
}

TEST_CASE("LeNet-5 learns the bright-square images in one short epoch") {
  const test::ThreadCountScope thread_count(2);
  const data::Dataset train = data::make_squares(1200, 4, 28, 21);
  const data::Dataset test = data::make_squares(200, 4, 28, 22);
  nn::TrainOptions o;
  o.model = "lenet5";
  o.epochs = 2;
  o.batch_size = 32;
  o.seed = 3;
  nn::Trainer trainer(o, train, test);
  std::vector<nn::EpochStats> history = trainer.run();
  std::printf("squares: LeNet-5 test accuracy %.3f\n", history.back().test_accuracy);
  // Four positions, chance 0.25: a convolutional net finds them at once.
  CHECK(history.back().test_accuracy > 0.9);
}

TEST_CASE("SGD with momentum and Adam take the textbook steps") {
  MemoryScope scope(MemTag::parameter, "p");
  nn::Parameter p{"p.weight", ag::Var(Tensor::from<float>({2}, {1.0f, -2.0f}), true, "p.weight")};
  SUBCASE("sgd") {
    nn::Sgd sgd({&p}, 0.1, 0.9);
    p.var.grad() = Tensor::from<float>({2}, {0.5f, 1.0f});
    sgd.step();  // v = g; w -= 0.1·v
    CHECK(p.var.value().item(0) == doctest::Approx(0.95));
    CHECK(p.var.value().item(1) == doctest::Approx(-2.1));
    sgd.step();  // v = 0.9·g + g = 1.9·g
    CHECK(p.var.value().item(0) == doctest::Approx(0.95 - 0.1 * 1.9 * 0.5));
  }
  SUBCASE("adam") {
    nn::Adam adam({&p}, 0.01);
    p.var.grad() = Tensor::from<float>({2}, {0.5f, -3.0f});
    adam.step();  // the first bias-corrected step is lr·sign(g)
    CHECK(p.var.value().item(0) == doctest::Approx(1.0 - 0.01).epsilon(1e-5));
    CHECK(p.var.value().item(1) == doctest::Approx(-2.0 + 0.01).epsilon(1e-5));
    adam.zero_grad();
    CHECK_FALSE(p.var.grad().defined());
  }
}

TEST_CASE("Adam and SGD with weight decay follow PyTorch's formulas over several steps") {
  // Written here from torch.optim's documented algorithms in double, not
  // from warpnet's folded form (bias corrections in the step size, ε scaled):
  // at step 1 Adam moves by lr·sign(g) whatever its corrections do, so only
  // later steps tell a frozen or misplaced correction apart. ε = 1e-3 makes
  // where ε is added matter.
  MemoryScope scope(MemTag::parameter, "p");
  const std::vector<std::vector<double>> grads = {{0.5, -3.0}, {-0.25, 1.5}, {0.75, 0.125}, {0.1, -0.2}};
  SUBCASE("adam") {
    nn::Parameter p{"p.weight", ag::Var(Tensor::from<float>({2}, {1.0f, -2.0f}), true, "p.weight")};
    const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-3;
    nn::Adam adam({&p}, lr, b1, b2, eps);
    double w[2] = {1.0, -2.0}, m[2] = {0, 0}, v[2] = {0, 0};
    for (size_t t = 1; t <= grads.size(); ++t) {
      p.var.grad() = Tensor::from<float>({2}, {float(grads[t - 1][0]), float(grads[t - 1][1])});
      adam.step();
      for (int i = 0; i < 2; ++i) {
        const double g = double(float(grads[t - 1][i]));
        m[i] = b1 * m[i] + (1 - b1) * g;
        v[i] = b2 * v[i] + (1 - b2) * g * g;
        const double m_hat = m[i] / (1 - std::pow(b1, double(t))), v_hat = v[i] / (1 - std::pow(b2, double(t)));
        w[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
        INFO("step ", t, " weight ", i);
        CHECK(p.var.value().item(i) == doctest::Approx(w[i]).epsilon(1e-6));
      }
    }
  }
  SUBCASE("sgd, momentum and weight decay (L2 in the gradient, as torch.optim.SGD's weight_decay)") {
    nn::Parameter p{"p.weight", ag::Var(Tensor::from<float>({2}, {1.0f, -2.0f}), true, "p.weight")};
    const double lr = 0.1, mu = 0.9, wd = 0.05;
    nn::Sgd sgd({&p}, lr, mu, wd);
    double w[2] = {1.0, -2.0}, b[2] = {0, 0};
    for (size_t t = 1; t <= grads.size(); ++t) {
      p.var.grad() = Tensor::from<float>({2}, {float(grads[t - 1][0]), float(grads[t - 1][1])});
      sgd.step();
      for (int i = 0; i < 2; ++i) {
        const double g = double(float(grads[t - 1][i])) + wd * w[i];
        b[i] = t == 1 ? g : mu * b[i] + g;
        w[i] -= lr * b[i];
        INFO("step ", t, " weight ", i);
        CHECK(p.var.value().item(i) == doctest::Approx(w[i]).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("a training step's memory splits into parameters, activations, gradients and optimizer state") {
  const test::ThreadCountScope thread_count(1);
  MemoryTracker& tracker = MemoryTracker::instance();
  const data::Dataset train = data::make_squares(64, 4, 28, 1);
  nn::TrainOptions o;
  o.model = "lenet5";
  o.epochs = 1;
  o.batch_size = 64;
  const int64_t params_before = tracker.tag(MemTag::parameter).current;
  const int64_t optim_before = tracker.tag(MemTag::optimizer).current;
  tracker.reset_peaks();
  nn::Trainer trainer(o, train, data::Dataset{});
  const int64_t params = trainer.model().parameter_count();
  CHECK(params == 61706 - 6 * 85);  // LeNet-5 has 61706 for 10 classes; 4 classes drop 6 rows of 84+1
  CHECK(tracker.tag(MemTag::parameter).current - params_before == params * 4);
  // Adam keeps two moments per parameter.
  CHECK(tracker.tag(MemTag::optimizer).current - optim_before == 2 * params * 4);
  trainer.run();
  // The activations kept for backward: conv1's output alone is 64·6·28·28
  // floats (1.2 MB); weights are 0.25 MB.
  CHECK(tracker.tag(MemTag::activation).peak > 64 * 6 * 28 * 28 * 4);
  CHECK(tracker.tag(MemTag::gradient).peak >= params * 4);
  bool conv1_seen = false;
  for (const MemRow& row : tracker.layers())
    if (row.layer == "conv1") {
      conv1_seen = true;
      CHECK(row.by_tag[int(MemTag::parameter)].peak >= (6 * 25 + 6) * 4);
      CHECK(row.by_tag[int(MemTag::activation)].peak >= 64 * 6 * 28 * 28 * 4);
    }
  CHECK(conv1_seen);
}
