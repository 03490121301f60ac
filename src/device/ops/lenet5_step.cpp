// The lenet5_step op: one training step's forward, loss and backward of
// LeNet-5 (nn::make_lenet5) as one fused computation, sizes {N, C}:
//   inputs  X (N,1,28,28), labels (N) i32 in [0,C), and the parameters in
//           the model's order: conv1 w (6,1,5,5), b (6); conv2 w (16,6,5,5),
//           b (16); fc1 w (120,400), b (120); fc2 w (84,120), b (84);
//           fc3 w (C,84), b (C)
//   outputs probs (N,C), row_loss (N), and each parameter's gradient of the
//           batch-mean loss, in the same order and shapes.
// The reference is the model's own layers' CPU ops, in double: what the
// layer-by-layer step computes, so the fused kernels are checked against
// the definition the rest of warpnet is.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cpu/ops.hpp"
#include "device/registry.hpp"

namespace warpnet::device {
namespace {

const cpu::Conv2dParams kConv1{1, 2, 1}, kConv2{1, 0, 1};
const cpu::Pool2dParams kPool{2, 2, 0};

std::vector<Shape> parameter_shapes(int64_t C) {
  return {{6, 1, 5, 5}, {6}, {16, 6, 5, 5}, {16}, {120, 400}, {120}, {84, 120}, {84}, {C, 84}, {C}};
}

// The images in [0, 1] as Fashion-MNIST's are; each weight and bias uniform
// in ±1/√fan_in, the scale the layers start from; a label per image.
std::vector<Tensor> make_inputs(const Sizes& s, Rng& rng) {
  const int64_t N = s[0], C = s[1];
  Tensor x = Tensor::empty({N, 1, 28, 28});
  fill_uniform(x, rng, 0.0, 1.0);
  Tensor labels = Tensor::empty({N}, DType::i32);
  for (int64_t i = 0; i < N; ++i) labels.data<int32_t>()[i] = int32_t(rng.below(uint64_t(C)));
  std::vector<Tensor> in = {std::move(x), std::move(labels)};
  const std::vector<Shape> shapes = parameter_shapes(C);
  for (size_t p = 0; p < shapes.size(); ++p) {
    const Shape& weight = shapes[p - p % 2];  // a bias takes its weight's fan-in
    const double fan_in = double(weight.numel() / weight[0]);
    Tensor t = Tensor::empty(shapes[p]);
    fill_uniform(t, rng, -1.0 / std::sqrt(fan_in), 1.0 / std::sqrt(fan_in));
    in.push_back(std::move(t));
  }
  return in;
}

std::vector<Shape> output_shapes(const Sizes& s) {
  std::vector<Shape> out = {{s[0], s[1]}, {s[0]}};
  for (const Shape& p : parameter_shapes(s[1])) out.push_back(p);
  return out;
}

Tensor abs_of(const Tensor& t) {
  Tensor a = t.to(DType::f64);
  double* p = a.data<double>();
  for (int64_t i = 0; i < a.numel(); ++i) p[i] = std::abs(p[i]);
  return a;
}

// One step through the model's CPU ops in `dtype`: forward, the loss,
// backward, with the values the error bound needs kept.
struct Pass {
  Tensor x, p1, a3, r3, r4, z5;  // the inputs of conv1, conv2, fc1, fc2, fc3, and the logits
  Tensor d1, d2, d3, d4, d5;     // the gradients at conv1's, conv2's, fc1's, fc2's, fc3's outputs
  std::vector<Tensor> outputs;   // the op's: probs, row_loss, the ten parameter gradients
};

Pass run_step(const std::vector<Tensor>& in, DType dtype) {
  std::vector<Tensor> t;
  for (size_t i = 0; i < in.size(); ++i) t.push_back(i == 1 ? in[i] : in[i].to(dtype));
  const Tensor &labels = t[1], &w1 = t[2], &b1 = t[3], &w2 = t[4], &b2 = t[5];
  const Tensor &w3 = t[6], &b3 = t[7], &w4 = t[8], &b4 = t[9], &w5 = t[10], &b5 = t[11];
  Pass s;
  s.x = t[0];
  const int64_t N = s.x.dim(0);
  const Tensor z1 = cpu::conv2d(s.x, w1, b1, kConv1), r1 = cpu::relu(z1);
  const cpu::MaxPoolResult pool1 = cpu::max_pool2d(r1, kPool);
  s.p1 = pool1.y;
  const Tensor z2 = cpu::conv2d(s.p1, w2, b2, kConv2), r2 = cpu::relu(z2);
  const cpu::MaxPoolResult pool2 = cpu::max_pool2d(r2, kPool);
  s.a3 = pool2.y.reshape({N, 400});
  const Tensor z3 = cpu::bias_add(cpu::matmul(s.a3, w3, false, true), b3);
  s.r3 = cpu::relu(z3);
  const Tensor z4 = cpu::bias_add(cpu::matmul(s.r3, w4, false, true), b4);
  s.r4 = cpu::relu(z4);
  s.z5 = cpu::bias_add(cpu::matmul(s.r4, w5, false, true), b5);
  const cpu::SoftmaxCrossEntropy ce = cpu::softmax_cross_entropy(s.z5, labels);
  s.d5 = cpu::softmax_cross_entropy_backward(ce.probs, labels);

  const cpu::MatmulGrads g5 = cpu::matmul_backward(s.r4, w5, s.d5, false, true);
  s.d4 = cpu::relu_backward(z4, g5.da);
  const cpu::MatmulGrads g4 = cpu::matmul_backward(s.r3, w4, s.d4, false, true);
  s.d3 = cpu::relu_backward(z3, g4.da);
  const cpu::MatmulGrads g3 = cpu::matmul_backward(s.a3, w3, s.d3, false, true);
  s.d2 = cpu::relu_backward(z2, cpu::max_pool2d_backward(g3.da.reshape(pool2.y.shape()), pool2.argmax, r2.shape()));
  const cpu::Conv2dGrads c2 = cpu::conv2d_backward(s.p1, w2, s.d2, kConv2, true);
  s.d1 = cpu::relu_backward(z1, cpu::max_pool2d_backward(c2.dx, pool1.argmax, r1.shape()));
  const cpu::Conv2dGrads c1 = cpu::conv2d_backward(s.x, w1, s.d1, kConv1, true, /*needs_dx=*/false);
  s.outputs = {ce.probs, ce.row_loss, c1.dw, c1.db, c2.dw, c2.db, g3.db, cpu::bias_add_backward(s.d3),
               g4.db,    cpu::bias_add_backward(s.d4), g5.db, cpu::bias_add_backward(s.d5)};
  return s;
}

std::vector<Tensor> reference(const Sizes&, const std::vector<Tensor>& in) {
  return run_step(in, DType::f64).outputs;
}

// ---- the error bound ---------------------------------------------------------
// Two parts, in units of u = 2^-24.
// 1. Each output is the last sum of a chain: a weight gradient Σ d·a over
//    the batch (and the positions of a conv plane), a bias gradient Σ d, a
//    probability and a loss from the logits. Its magnitude M(v) is that sum
//    with every term replaced by its absolute value, from the real (double)
//    operands: Σ|d|·|a|, Σ|d|. We allow κ·u·M(v), κ twice the total length
//    of the sums of the whole chain: conv1 (25 taps + bias), conv2 (150 +
//    1), fc1..fc3 (400, 120, 84, + 1 each), the softmax (C terms, an exp, a
//    log, a division: C + 16), back through fc3, fc2, fc1 (C, 84, 120) and
//    conv2's data gradient (400), then conv1's weight gradient over 784
//    positions and the N images; twice, for second-order terms, the ReLU
//    and bias roundings and the math functions' ulps. The softmax enters as
//    its derivative bounds it: a logit error e moves p_j by at most 2·p_j·e
//    and the loss (m − z[label]) + log s by 3e, so with E a row's largest
//    logit magnitude (Σ|w|·|r4| + |b|), M(p_j) = p_j·(1 + 2E) and M(loss) =
//    1 + log C + |loss| + 3E.
//    That is the first-order bound of the last sum with each operand's own
//    error taken as κ_a·u·|a|; it does not hold where an operand is itself
//    a sum that cancels (an fc1 input a thousand times smaller than its
//    terms errs by a thousand times more, relative to its size). The
//    bound that does, the whole chain in absolute values, is some 10^4
//    times wider here: it passes a kernel that swaps a filter's rows and
//    columns in conv1's weight gradient.
// 2. So, for the cancellations, 16 times the largest error of warpnet's own
//    fp32 CPU path (the layers' ops in f32, run_step) on that output at this
//    input. It is measured, not derived: the kernels sum in another order
//    and may err more at one element, but not 16 times more than the CPU's
//    worst (over seeds 1-8 at the test sizes but C = 1, whose outputs are
//    all 0, the kernel's worst element took 0.8-2.6% of this tolerance).
//    The swapped filter errs 2,400 times the tolerance.
double kappa(const Sizes& s) {
  const double C = double(s[1]), N = double(s[0]);
  return 2.0 * (26 + 151 + 401 + 121 + 85 + (C + 16) + (C + 84 + 120 + 400) + 784 + N);
}

std::vector<Tensor> tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  const Pass real = run_step(in, DType::f64);
  const int64_t N = s[0], C = s[1];
  const Tensor logit_magnitude = cpu::bias_add(cpu::matmul(abs_of(real.r4), abs_of(in[10]), false, true), abs_of(in[11]));
  Tensor probs = Tensor::empty({N, C}, DType::f64), loss = Tensor::empty({N}, DType::f64);
  for (int64_t i = 0; i < N; ++i) {
    double E = 0;
    for (int64_t j = 0; j < C; ++j) E = std::max(E, logit_magnitude.data<double>()[i * C + j]);
    for (int64_t j = 0; j < C; ++j)
      probs.data<double>()[i * C + j] = real.outputs[0].data<double>()[i * C + j] * (1 + 2 * E);
    loss.data<double>()[i] = 1 + std::log(double(C)) + std::abs(real.outputs[1].data<double>()[i]) + 3 * E;
  }
  const cpu::Conv2dGrads c1 = cpu::conv2d_backward(abs_of(real.x), abs_of(in[2]), abs_of(real.d1), kConv1, true, false);
  const cpu::Conv2dGrads c2 = cpu::conv2d_backward(abs_of(real.p1), abs_of(in[4]), abs_of(real.d2), kConv2, true, false);
  const auto dense = [](const Tensor& a, const Tensor& w, const Tensor& d) {
    return cpu::matmul_backward(abs_of(a), abs_of(w), abs_of(d), false, true, /*need_da=*/false).db;
  };
  std::vector<Tensor> bounds = {probs, loss, c1.dw, c1.db, c2.dw, c2.db,
                                dense(real.a3, in[6], real.d3), cpu::bias_add_backward(abs_of(real.d3)),
                                dense(real.r3, in[8], real.d4), cpu::bias_add_backward(abs_of(real.d4)),
                                dense(real.r4, in[10], real.d5), cpu::bias_add_backward(abs_of(real.d5))};
  // Plus what fp32 itself errs on this input where an operand cancels:
  // 16 times the largest error of warpnet's own fp32 CPU path on each output.
  const std::vector<Tensor> fp32 = run_step(in, DType::f32).outputs;
  const double scale = kappa(s) * std::ldexp(1.0, -24);
  for (size_t o = 0; o < bounds.size(); ++o) {
    double spread = 0;
    for (int64_t i = 0; i < fp32[o].numel(); ++i)
      spread = std::max(spread, std::abs(fp32[o].item(i) - real.outputs[o].item(i)));
    for (int64_t i = 0; i < bounds[o].numel(); ++i) bounds[o].data<double>()[i] = scale * bounds[o].data<double>()[i] + 16 * spread;
  }
  return bounds;
}

void check_sizes(const Op& op, const Sizes& s) {
  require_at_least(op, s, {1, 1});
  WN_CHECK(s[1] <= 32, op.name, ": C = ", s[1], " classes at ", describe_sizes(op, s),
           ": the fused step's softmax is one warp, at most 32");
  require_indexable(op, s, Shape{s[0], 28 * 28}, "X");
}

const Registration lenet5_step{Op{
    .name = "lenet5_step",
    .size_names = {"N", "C"},
    // One image and a few; Fashion-MNIST's 10 classes, one class (a loss of
    // 0, the gradient 0), and the most one warp's softmax takes.
    .test_sizes = {{1, 10}, {2, 1}, {3, 32}},
    .defaults = {64, 10},
    .make_inputs = make_inputs,
    .output_shapes = output_shapes,
    .reference = reference,
    .tolerance = tolerance,
    // The training step's batches: the default 64, and 256.
    .bench_sizes = {{64, 10}, {256, 10}},
    .reduction_length = [](const Sizes& s) { return int64_t(kappa(s) / 2); },
    .cpu_fp32 = [](const Sizes&, const std::vector<Tensor>& in) { return run_step(in, DType::f32).outputs; },
    .check_sizes = check_sizes,
}};

}  // namespace
}  // namespace warpnet::device
