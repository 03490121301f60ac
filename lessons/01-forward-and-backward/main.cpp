// Lesson 01 — forward and backward.
//
// (a) A two-layer network small enough to follow on paper, computed by hand
//     with plain loops: forward, loss, and the backward chain in reverse.
// (b) The same network through warpnet's autograd: the same numbers.
// (c) Every gradient autograd produced, checked by central finite
//     differences in double; the program fails if one disagrees.
// (d) Why backward costs about twice the forward: counted, then timed.
// (e) An MLP learning the spirals set: the loss falls (or the program fails).
//
// Run: build/bin/lesson01            (--quick: fewer epochs, for the test)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "autograd/functions.hpp"
#include "core/cost.hpp"
#include "core/timer.hpp"
#include "datasets/synthetic.hpp"
#include "nn/models.hpp"
#include "nn/optim.hpp"
#include "lessons/lesson_args.hpp"
#include "nn/trainer.hpp"

using namespace warpnet;

namespace {

// ---- a matrix of doubles for the hand computation ---------------------------

struct Matrix {
  int rows = 0, cols = 0;
  std::vector<double> v;  // row-major
  Matrix(int r, int c) : rows(r), cols(c), v(size_t(r) * c, 0.0) {}
  double& operator()(int r, int c) { return v[size_t(r) * cols + c]; }
  double operator()(int r, int c) const { return v[size_t(r) * cols + c]; }
};

// A tensor's values as a matrix; a vector (C) becomes one row (1,C).
Matrix to_matrix(const Tensor& t) {
  const int rows = t.rank() == 1 ? 1 : int(t.dim(0));
  Matrix m(rows, int(t.numel() / rows));
  for (size_t i = 0; i < m.v.size(); ++i) m.v[i] = t.item(int64_t(i));
  return m;
}

void print_matrix(const char* name, const Matrix& m) {
  for (int r = 0; r < m.rows; ++r) {
    std::printf("  %-9s [", r == 0 ? name : "");
    for (int c = 0; c < m.cols; ++c) std::printf(" %8.4f", m(r, c));
    std::printf(" ]\n");
  }
}

double max_abs_diff(const Matrix& a, const Matrix& b) {
  double d = 0;
  for (size_t i = 0; i < a.v.size(); ++i) d = std::max(d, std::abs(a.v[i] - b.v[i]));
  return d;
}

// C = op(A)·op(B), op(X) = Xᵀ when asked: the triple loop of the definition.
Matrix product(const Matrix& a, bool ta, const Matrix& b, bool tb) {
  const int m = ta ? a.cols : a.rows, k = ta ? a.rows : a.cols, n = tb ? b.rows : b.cols;
  Matrix c(m, n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p) c(i, j) += (ta ? a(p, i) : a(i, p)) * (tb ? b(j, p) : b(p, j));
  return c;
}

// ---- the network: x → Linear → ReLU → Linear → softmax cross-entropy -------

struct Net {
  Tensor x;       // f64 (N,in)       the batch
  Tensor w1, b1;  // f64 (hidden,in), (hidden)
  Tensor w2, b2;  // f64 (classes,hidden), (classes)
  Tensor labels;  // i32 (N)
  std::vector<Tensor*> tensors() { return {&x, &w1, &b1, &w2, &b2}; }
};
const char* const kTensorNames[] = {"x", "W1", "b1", "W2", "b2"};

// Two examples, two features, three hidden units, two classes. Row 0 of W1
// with b1[0] is the single neuron of part 1; example 0 is its input.
Net tiny_net() {
  return {Tensor::from<double>({2, 2}, {1.0, 0.5, -0.5, 2.0}),
          Tensor::from<double>({3, 2}, {0.5, -0.4, 0.3, 0.8, -0.6, 0.2}),
          Tensor::from<double>({3}, {0.1, -0.2, 0.05}),
          Tensor::from<double>({2, 3}, {0.7, -0.5, 0.2, -0.3, 0.6, 0.4}),
          Tensor::from<double>({2}, {0.0, 0.1}),
          Tensor::from<int32_t>({2}, {0, 1})};
}

// A wider net with seeded random values, so the check does not rest on
// hand-picked numbers.
Net random_net(uint64_t seed) {
  const int64_t n = 8, in = 5, hidden = 16, classes = 4;
  Rng rng(seed);
  Net net{Tensor::empty({n, in}, DType::f64),   Tensor::empty({hidden, in}, DType::f64),
          Tensor::empty({hidden}, DType::f64),  Tensor::empty({classes, hidden}, DType::f64),
          Tensor::empty({classes}, DType::f64), Tensor::empty({n}, DType::i32)};
  // Inputs ~ N(0,1); weights and biases uniform in ±1/√fan_in as nn::Linear
  // starts them, which keeps the softmax away from saturation.
  fill_normal(net.x, rng, 0.0, 1.0);
  for (Tensor* t : {&net.w1, &net.b1}) fill_uniform(*t, rng, -1 / std::sqrt(double(in)), 1 / std::sqrt(double(in)));
  for (Tensor* t : {&net.w2, &net.b2})
    fill_uniform(*t, rng, -1 / std::sqrt(double(hidden)), 1 / std::sqrt(double(hidden)));
  for (int64_t i = 0; i < n; ++i) net.labels.set(i, double(rng.below(classes)));
  return net;
}

// ---- (a) by hand ---------------------------------------------------------------

struct HandPass {
  Matrix z1{0, 0}, h{0, 0}, logits{0, 0}, probs{0, 0};
  double loss = 0;
  Matrix dlogits{0, 0}, dw2{0, 0}, db2{0, 0}, dh{0, 0}, dz1{0, 0}, dw1{0, 0}, db1{0, 0}, dx{0, 0};
};

// y = x·Wᵀ + b, b added to every row.
Matrix linear(const Matrix& x, const Matrix& w, const Matrix& b) {
  Matrix y = product(x, false, w, true);
  for (int r = 0; r < y.rows; ++r)
    for (int c = 0; c < y.cols; ++c) y(r, c) += b(0, c);
  return y;
}

// db = Σ over the batch of dy: every example added the same b.
Matrix column_sums(const Matrix& dy) {
  Matrix s(1, dy.cols);
  for (int r = 0; r < dy.rows; ++r)
    for (int c = 0; c < dy.cols; ++c) s(0, c) += dy(r, c);
  return s;
}

HandPass by_hand(Net& net) {
  const Matrix x = to_matrix(net.x), w1 = to_matrix(net.w1), b1 = to_matrix(net.b1);
  const Matrix w2 = to_matrix(net.w2), b2 = to_matrix(net.b2);
  const int n = x.rows;
  HandPass p;
  // Forward: each layer is a matmul over the whole batch, a bias, an activation.
  p.z1 = linear(x, w1, b1);
  p.h = p.z1;
  for (double& v : p.h.v) v = std::max(v, 0.0);  // ReLU
  p.logits = linear(p.h, w2, b2);
  // Softmax, then the mean of −log(probability of the right class).
  p.probs = p.logits;
  for (int r = 0; r < n; ++r) {
    double top = p.logits(r, 0), sum = 0;
    for (int c = 1; c < p.logits.cols; ++c) top = std::max(top, p.logits(r, c));
    for (int c = 0; c < p.logits.cols; ++c) sum += p.probs(r, c) = std::exp(p.logits(r, c) - top);
    for (int c = 0; c < p.logits.cols; ++c) p.probs(r, c) /= sum;
    p.loss -= std::log(p.probs(r, int(net.labels.item(r)))) / n;
  }
  // Backward: the same chain in reverse, one local derivative per op.
  p.dlogits = p.probs;  // softmax + cross-entropy → (p − onehot) / N
  for (int r = 0; r < n; ++r) {
    p.dlogits(r, int(net.labels.item(r))) -= 1.0;
    for (int c = 0; c < p.dlogits.cols; ++c) p.dlogits(r, c) /= n;
  }
  p.dw2 = product(p.dlogits, true, p.h, false);  // dW2 = dlogitsᵀ·h   (classes,hidden)
  p.db2 = column_sums(p.dlogits);                // bias → sum over the batch
  p.dh = product(p.dlogits, false, w2, false);   // dh  = dlogits·W2   (N,hidden)
  p.dz1 = p.dh;                                  // ReLU → pass where z1 > 0, else 0
  for (size_t i = 0; i < p.dz1.v.size(); ++i) p.dz1.v[i] *= p.z1.v[i] > 0 ? 1.0 : 0.0;
  p.dw1 = product(p.dz1, true, x, false);  // dW1 = dz1ᵀ·x   (hidden,in)
  p.db1 = column_sums(p.dz1);
  p.dx = product(p.dz1, false, w1, false);  // dx  = dz1·W1   (N,in): what a layer below would receive
  return p;
}

void show_one_neuron(Net& net) {
  const double w0 = net.w1.item(0), w1 = net.w1.item(1), b = net.b1.item(0);
  const double x0 = net.x.item(0), x1 = net.x.item(1);
  const double z = w0 * x0 + w1 * x1 + b;
  std::printf("1. One neuron: output = relu(w·x + b)\n");
  std::printf("  w = (%.1f, %.1f), b = %.1f, x = (%.1f, %.1f)\n", w0, w1, b, x0, x1);
  std::printf("  w·x + b = %.1f·%.1f + (%.1f)·%.1f + %.1f = %.4f;  relu → %.4f\n\n", w0, x0, w1, x1, b, z,
              std::max(z, 0.0));
}

void show_hand_pass(Net& net, const HandPass& p) {
  std::printf("2. A layer is many neurons, and a batch is many inputs: one matmul.\n");
  std::printf("  z1 = x·W1ᵀ + b1, h = relu(z1), logits = h·W2ᵀ + b2; one row per example\n");
  print_matrix("x", to_matrix(net.x));
  print_matrix("W1", to_matrix(net.w1));
  print_matrix("b1", to_matrix(net.b1));
  print_matrix("z1", p.z1);
  print_matrix("h", p.h);
  print_matrix("W2", to_matrix(net.w2));
  print_matrix("b2", to_matrix(net.b2));
  print_matrix("logits", p.logits);
  std::printf("\n3. The loss: softmax turns logits into probabilities; cross-entropy = mean −log p[label]\n");
  print_matrix("probs", p.probs);
  std::printf("  labels    [");
  for (int64_t i = 0; i < net.labels.numel(); ++i) std::printf(" %d", int(net.labels.item(i)));
  std::printf(" ]\n");
  std::printf("  loss      %.6f\n\n", p.loss);
  std::printf("4. Backward: the chain rule, the same chain run in reverse\n");
  print_matrix("dlogits", p.dlogits);
  std::printf("            = (probs − onehot(labels)) / N\n");
  print_matrix("dW2", p.dw2);
  std::printf("            = dlogitsᵀ · h\n");
  print_matrix("db2", p.db2);
  std::printf("            = dlogits summed over the batch\n");
  print_matrix("dh", p.dh);
  std::printf("            = dlogits · W2\n");
  print_matrix("dz1", p.dz1);
  std::printf("            = dh where z1 > 0, else 0 (the ReLU mask)\n");
  print_matrix("dW1", p.dw1);
  std::printf("            = dz1ᵀ · x\n");
  print_matrix("db1", p.db1);
  std::printf("            = dz1 summed over the batch\n");
  print_matrix("dx", p.dx);
  std::printf("            = dz1 · W1, what a layer below x would receive\n");
  std::printf("\n");
}

// ---- (b) through autograd --------------------------------------------------------

// Every node of the autograd graph, kept so its value and gradient can be read.
struct Traced {
  ag::Var x, w1, b1, w2, b2, z1, h, logits, loss;
};

Traced autograd_pass(Net& net) {
  Traced t;
  // The leaves: tensors that want a gradient. Var shares the tensor's storage.
  t.x = ag::Var(net.x, true, "x");
  t.w1 = ag::Var(net.w1, true, "W1");
  t.b1 = ag::Var(net.b1, true, "b1");
  t.w2 = ag::Var(net.w2, true, "W2");
  t.b2 = ag::Var(net.b2, true, "b2");
  ag::Tape tape;
  ag::TapeScope recording(tape);
  t.z1 = ag::linear(t.x, t.w1, t.b1);
  t.h = ag::relu(t.z1);
  t.logits = ag::linear(t.h, t.w2, t.b2);
  t.loss = ag::softmax_cross_entropy(t.logits, net.labels);
  tape.backward(t.loss);  // plays the recorded backward closures newest first
  return t;
}

// Prints hand and autograd values one above the other; returns the largest gap.
double compare(const char* name, const Matrix& hand, const Tensor& autograd) {
  const Matrix a = to_matrix(autograd);
  const double gap = max_abs_diff(hand, a);
  std::printf("  %-8s hand     [", name);
  for (double v : hand.v) std::printf(" %8.4f", v);
  std::printf(" ]\n  %-8s autograd [", "");
  for (double v : a.v) std::printf(" %8.4f", v);
  std::printf(" ]   max |diff| %.1e\n", gap);
  return gap;
}

bool check_against_hand(Net& net, const HandPass& p) {
  std::printf("5. The same network through warpnet's autograd (ag::linear, ag::relu, ag::softmax_cross_entropy)\n");
  Traced t = autograd_pass(net);
  Matrix loss(1, 1);
  loss.v[0] = p.loss;
  double gap = 0;
  gap = std::max(gap, compare("logits", p.logits, t.logits.value()));
  gap = std::max(gap, compare("loss", loss, t.loss.value()));
  gap = std::max(gap, compare("dlogits", p.dlogits, t.logits.grad()));
  gap = std::max(gap, compare("dW2", p.dw2, t.w2.grad()));
  gap = std::max(gap, compare("db2", p.db2, t.b2.grad()));
  gap = std::max(gap, compare("dh", p.dh, t.h.grad()));
  gap = std::max(gap, compare("dW1", p.dw1, t.w1.grad()));
  gap = std::max(gap, compare("db1", p.db1, t.b1.grad()));
  gap = std::max(gap, compare("dx", p.dx, t.x.grad()));
  // Both sides do the same double arithmetic, perhaps summed in another order.
  const bool ok = gap <= 1e-12;
  std::printf("  largest difference %.1e: %s\n\n", gap, ok ? "identical to rounding" : "MISMATCH");
  return ok;
}

// ---- (c) gradient check by central finite differences ------------------------

double loss_of(Net& net) {
  ag::NoGradScope no_tape;
  ag::Var h = ag::relu(ag::linear(ag::Var(net.x), ag::Var(net.w1), ag::Var(net.b1)));
  return ag::softmax_cross_entropy(ag::linear(h, ag::Var(net.w2), ag::Var(net.b2)), net.labels).value().item(0);
}

// For each value θ: (L(θ+ε) − L(θ−ε)) / 2ε against autograd's dL/dθ. The
// quotient is itself off by ~ε² (truncation) + 1e-16/ε (rounding): ε = 1e-5
// balances them near 1e-11 in double. A gradient far below 1e-3 cannot be
// checked to 1e-7 against a yardstick that coarse, so the relative error's
// denominator never drops below kFloor.
bool gradient_check(const char* title, Net net) {
  constexpr double kEps = 1e-5, kFloor = 1e-3, kTolerance = 1e-6;
  Traced t = autograd_pass(net);
  const ag::Var* vars[] = {&t.x, &t.w1, &t.b1, &t.w2, &t.b2};
  std::printf("  %s\n  %-4s %-8s %8s   %s\n", title, "", "shape", "values", "max relative error");
  double worst = 0;
  std::vector<Tensor*> tensors = net.tensors();
  for (size_t k = 0; k < tensors.size(); ++k) {
    Tensor& theta = *tensors[k];
    const Tensor& analytic = vars[k]->grad();
    double err = 0;
    for (int64_t i = 0; i < theta.numel(); ++i) {
      const double saved = theta.item(i);
      theta.set(i, saved + kEps);
      const double up = loss_of(net);
      theta.set(i, saved - kEps);
      const double down = loss_of(net);
      theta.set(i, saved);
      const double numeric = (up - down) / (2 * kEps), a = analytic.item(i);
      err = std::max(err, std::abs(a - numeric) / std::max(std::abs(a) + std::abs(numeric), kFloor));
    }
    std::printf("  %-4s %-8s %8lld   %.2e\n", kTensorNames[k], theta.shape().str().c_str(),
                static_cast<long long>(theta.numel()), err);
    worst = std::max(worst, err);
  }
  const bool ok = worst < kTolerance;
  std::printf("  worst %.2e (tolerance %.0e): %s\n\n", worst, kTolerance, ok ? "PASS" : "FAIL");
  return ok;
}

// ---- (d) why backward costs about twice the forward ---------------------------

double seconds_of(const std::function<void()>& fn) {
  Timer timer;
  fn();
  return timer.seconds();
}

// The best of `reps` runs of each, alternating a and b so that a disturbance
// from other work on the machine cannot favour one of them; a warm-up first.
std::pair<double, double> best_seconds(int reps, const std::function<void()>& a, const std::function<void()>& b) {
  a();
  b();
  double best_a = 1e30, best_b = 1e30;
  for (int r = 0; r < reps; ++r) {
    best_a = std::min(best_a, seconds_of(a));
    best_b = std::min(best_b, seconds_of(b));
  }
  return {best_a, best_b};
}

void backward_cost(bool quick) {
  std::printf("7. Why backward costs about 2× forward\n");
  std::printf(
      "  A linear layer's forward is one matmul, y = x·Wᵀ. Its backward is two of the same size:\n"
      "  dW = dyᵀ·x for the update and dx = dy·W for the layer below. Elementwise ops (bias, ReLU)\n"
      "  add little either way.\n");
  const int64_t n = 256, in = 1024, out = 1024;
  const OpCost fwd = matmul_cost(n, out, in), bwd = backward_of(fwd);
  std::printf("  Linear(%lld→%lld) on a batch of %lld: forward %.0f MFLOP, backward %.0f MFLOP (cost.hpp)\n",
              static_cast<long long>(in), static_cast<long long>(out), static_cast<long long>(n), fwd.flops / 1e6,
              bwd.flops / 1e6);
  Rng rng(3);
  Tensor x = Tensor::empty({n, in}), w = Tensor::empty({out, in}), dy = Tensor::empty({n, out});
  for (Tensor* t : {&x, &w, &dy}) fill_uniform(*t, rng, -1, 1);
  // Outputs allocated once, so the timing is of arithmetic, not of fresh memory.
  Tensor y = Tensor::empty({n, out}), dw = Tensor::empty({out, in}), dx = Tensor::empty({n, in});
  const int reps = quick ? 3 : 10;
  const auto [tf, tb] = best_seconds(
      reps, [&] { cpu::matmul_into(x, w, y, false, true); },  // y = x·Wᵀ
      [&] {
        cpu::matmul_into(dy, x, dw, true, false);   // dW = dyᵀ·x
        cpu::matmul_into(dy, w, dx, false, false);  // dx = dy·W
      });
  std::printf("  measured on this CPU (%d threads, best of %d):\n", cpu::num_threads(), reps);
  std::printf("    forward  %7.2f ms  %6.1f GFLOP/s\n", tf * 1e3, fwd.flops / tf / 1e9);
  std::printf("    backward %7.2f ms  %6.1f GFLOP/s   backward / forward = %.2f\n\n", tb * 1e3, bwd.flops / tb / 1e9,
              tb / tf);
}

// ---- (e) training: the loss falls -------------------------------------------------

bool train_spirals(bool quick) {
  const uint64_t seed = 1;
  const data::Dataset train = data::make_spirals(1500, 3, seed), test = data::make_spirals(450, 3, seed + 1);
  auto model = nn::make_mlp(2, {64, 64}, 3, seed);
  nn::Adam adam(model->parameters(), 0.01);
  data::Batches batches(train, 32, true, seed);
  const int epochs = quick ? 12 : 30;
  std::printf("8. Training: an MLP 2→64→64→3 on %lld spiral points (3 arms), Adam lr 0.01, batch 32, seed %llu\n",
              static_cast<long long>(train.size()), static_cast<unsigned long long>(seed));
  const double start = nn::evaluate(*model, train, 256).loss;
  std::printf("  epoch   train loss\n  %5d   %10.4f   (before training; ln 3 = %.4f is a blind guess)\n", 0, start,
              std::log(3.0));
  double last = start;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    if (epoch > 1) batches.start_epoch();
    data::Batch batch;
    double sum = 0;
    while (batches.next(batch)) {
      ag::Tape tape;
      ag::TapeScope recording(tape);
      ag::Var loss = ag::softmax_cross_entropy((*model)(ag::Var(batch.inputs)), batch.labels);  // forward
      adam.zero_grad();
      tape.backward(loss);  // backward
      adam.step();          // update
      sum += loss.value().item(0) * double(batch.labels.dim(0));
    }
    last = sum / double(train.size());
    if (epoch <= 3 || epoch % 3 == 0 || epoch == epochs) std::printf("  %5d   %10.4f\n", epoch, last);
  }
  const nn::EvalResult held_out = nn::evaluate(*model, test, 256);
  std::printf("  held-out spirals: loss %.4f, accuracy %.1f%%\n", held_out.loss, 100 * held_out.accuracy);
  // The claim the chapter makes: following the gradients lowers the loss.
  const bool ok = last < 0.5 * start;
  std::printf("  loss fell from %.4f to %.4f: %s\n", start, last, ok ? "PASS" : "FAIL (expected below half)");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<bool> args = warpnet::lesson::parse_quick(argc, argv);
  if (!args) return 2;
  const bool quick = *args;
  try {
    std::printf("Lesson 01 — forward and backward\n================================\n\n");
    Net net = tiny_net();
    show_one_neuron(net);
    const HandPass hand = by_hand(net);
    show_hand_pass(net, hand);
    bool ok = check_against_hand(net, hand);
    std::printf("6. Every gradient against central finite differences, in double\n");
    ok = gradient_check("the tiny network above:", tiny_net()) && ok;
    ok = gradient_check("a random network, batch 8, 5→16→4 (seed 42):", random_net(42)) && ok;
    backward_cost(quick);
    ok = train_spirals(quick) && ok;
    std::printf("\n%s\n", ok ? "All checks passed." : "SOME CHECKS FAILED.");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lesson01: %s\n", e.what());
    return 1;
  }
}
