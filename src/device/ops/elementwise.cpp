// The elementwise ops. The activations relu, gelu, sigmoid, tanh and their
// backwards work on a flat tensor of n elements (an activation does not care
// about shape): a forward takes x (n) to y (n); a backward takes x (n), the
// forward's input — its output y for sigmoid and tanh — and dy (n) to dx (n).
// mul and add take a (n), b (n) to a ⊙ b and a + b. bias_add adds b (C) along axis 1 of x (N,C,S). The
// references are the CPU's own functions (src/cpu/elementwise.cpp), in double
// from the same fp32 values the kernels read.
#include <cmath>
#include <string>

#include "cpu/ops.hpp"
#include "device/registry.hpp"

namespace warpnet::device {
namespace {

// x uniform in [-6, 6], where GELU runs from ~0 through its dip to ~x, with
// every 5th element exactly 0: ReLU's kink, whose gradient must be 0 (not dy).
Tensor activation_input(const Sizes& s, Rng& rng) {
  Tensor x = Tensor::empty({s[0]});
  fill_uniform(x, rng, -6.0, 6.0);
  float* p = x.data<float>();
  for (int64_t i = 0; i < s[0]; i += 5) p[i] = 0.0f;
  return x;
}
std::vector<Tensor> unary_inputs(const Sizes& s, Rng& rng) { return {activation_input(s, rng)}; }
// x as above, dy uniform in [-1, 1].
std::vector<Tensor> binary_inputs(const Sizes& s, Rng& rng) {
  Tensor x = activation_input(s, rng), dy = Tensor::empty({s[0]});
  fill_uniform(dy, rng, -1.0, 1.0);
  return {std::move(x), std::move(dy)};
}

Shape flat(const Sizes& s) { return Shape{s[0]}; }

// ReLU and its backward pick one of their inputs or 0: exact in any
// precision, so zero tolerance; one wrong element is a bug.
std::vector<Tensor> exact(const Sizes& s, const std::vector<Tensor>&) { return {Tensor::zeros({s[0]}, DType::f64)}; }

// n: 1, 7, 33 (not whole float4s, and past a warp), 1000 (whole float4s, no
// tail), 1031 and 4099 (a tail of 3, several blocks), and one past the grid
// cap (1056 blocks of 256 threads, elementwise_registration.hpp), so every
// version's grid-stride loop comes round again: 1081351 = 4·1056·256 + 7 is
// 270337 float4s for 270336 threads, plus a tail of 3 (~0.4 s per run).
const std::vector<Sizes> kTestSizes = {{1}, {7}, {33}, {1000}, {1031}, {4099}, {1081351}};
// 64M elements: 256 MiB per tensor, far past any L2, memory-bound.
const std::vector<Sizes> kBenchSizes = {{64 << 20}};
// No sums: each output comes from one element.
int64_t one(const Sizes&) { return 1; }

using OpFunction = std::vector<Tensor> (*)(const Sizes&, const std::vector<Tensor>&);

// An activation op over n elements (forward: {x}; backward: {x, dy}): what
// differs between them is the inputs, the reference, the bound and the CPU path.
Op activation_op(std::string name, std::vector<Tensor> (*inputs)(const Sizes&, Rng&), OpFunction reference,
                 OpFunction tolerance, OpFunction cpu_fp32) {
  return Op{.name = std::move(name),
            .size_names = {"n"},
            .test_sizes = kTestSizes,
            .defaults = {1 << 20},
            .make_inputs = inputs,
            .output_shapes = [](const Sizes& s) { return std::vector<Shape>{flat(s)}; },
            .reference = reference,
            .tolerance = tolerance,
            .bench_sizes = kBenchSizes,
            .reduction_length = one,
            .cpu_fp32 = cpu_fp32,
            .check_sizes = every_size_at_least_1};
}

const Registration relu{activation_op(
    "relu", unary_inputs, [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {cpu::relu(in[0].to(DType::f64))}; },
    exact, [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {cpu::relu(in[0])}; })};

const Registration relu_backward{activation_op(
    "relu_backward", binary_inputs,
    [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {cpu::relu_backward(in[0].to(DType::f64), in[1].to(DType::f64))};
    },
    exact, [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {cpu::relu_backward(in[0], in[1])}; })};

// ---- GELU --------------------------------------------------------------------
// The kernels evaluate the tanh form in fp32 (kernels/common/activations.hpp):
// u = √(2/π)·(x + 0.044715·x³), t = tanhf(u). Errors in units of 2^-24 (half
// an ulp at 1, the unit roundoff):
//  - u: 5 roundings (x·x·x·c, + x, · √(2/π)) and the two constants' own, no
//    cancellation (x and c·x³ share a sign): relative at most 8.
//  - t: tanh' = sech²(u), and |u|·sech²(u) <= 0.45, so u's error moves t by
//    at most 0.45·8 = 3.6 absolute; tanhf itself adds at most 2 ulp (CUDA's
//    documented bound; glibc's is below that), an ulp of |t| < 1 being <= 1.
//    Together E = 5.6, absolute — not relative: for x << 0, 1 + t cancels to
//    a tiny number and only an absolute bound survives.
//  - forward y = (0.5·x)·(1 + t): the sum adds 1 (|1 + t| < 2), the product 1
//    relative: |Δy| <= 0.5·|x|·6.6 + |y| = 3.3·|x| + |y|.
//  - backward dx = dy·(a + b), a = 0.5·(1 + t), b = 0.5·x·(1 - t²)·du,
//    du = √(2/π)·(1 + 3·0.044715·x²): |Δa| <= 3.3; t² errs by 2·E + 1 and
//    1 - t² by half more, 12.7 absolute, times 0.5·|x|·du; du's 6 roundings
//    and b's 2 products 8 relative to |b|; the sum and the product with dy 1
//    each relative. |Δdx| <= |dy|·(3.3 + 6.35·|x|·du + 8·|b|) + 2·|dx|.
// We allow about twice each: 8·|x| + 4·|y| forward, |dy|·(8 + 16·|x|·du +
// 16·|b|) + 4·|dx| backward, times 2^-24 (at |x| = 6: ~3e-6 and ~1e-5 at
// most). A wrong constant (0.0447 for 0.044715) or the erf form of GELU
// (differing by up to ~1e-3) is far outside it; x = 0 gives y = 0 exactly and
// a zero bound.
constexpr double kU = 0x1p-24, kGeluScale = 0.7978845608028654, kGeluCubic = 0.044715;

std::vector<Tensor> gelu_tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  const Tensor y = cpu::gelu(in[0].to(DType::f64));
  Tensor tol = Tensor::empty({s[0]}, DType::f64);
  const float* x = in[0].data<float>();
  const double* py = y.data<double>();
  double* pt = tol.data<double>();
  for (int64_t i = 0; i < s[0]; ++i) pt[i] = (8.0 * std::abs(double(x[i])) + 4.0 * std::abs(py[i])) * kU;
  return {tol};
}

std::vector<Tensor> gelu_backward_tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  const Tensor dx = cpu::gelu_backward(in[0].to(DType::f64), in[1].to(DType::f64));
  Tensor tol = Tensor::empty({s[0]}, DType::f64);
  const float* px = in[0].data<float>();
  const float* pg = in[1].data<float>();
  const double* pdx = dx.data<double>();
  double* pt = tol.data<double>();
  for (int64_t i = 0; i < s[0]; ++i) {
    const double x = px[i], t = std::tanh(kGeluScale * (x + kGeluCubic * x * x * x));
    const double du = kGeluScale * (1.0 + 3.0 * kGeluCubic * x * x), b = 0.5 * x * (1.0 - t * t) * du;
    const double g = std::abs(double(pg[i]));
    pt[i] = (g * (8.0 + 16.0 * std::abs(x) * du + 16.0 * std::abs(b)) + 4.0 * std::abs(pdx[i])) * kU;
  }
  return {tol};
}

const Registration gelu{activation_op(
    "gelu", unary_inputs, [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {cpu::gelu(in[0].to(DType::f64))}; },
    gelu_tolerance, [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {cpu::gelu(in[0])}; })};

const Registration gelu_backward{activation_op(
    "gelu_backward", binary_inputs,
    [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {cpu::gelu_backward(in[0].to(DType::f64), in[1].to(DType::f64))};
    },
    gelu_backward_tolerance, [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {cpu::gelu_backward(in[0], in[1])}; })};

// ---- sigmoid, tanh -------------------------------------------------------------
// Their backwards take the forward's OUTPUT y, as the CPU's do:
// sigmoid_backward(y, dy) = dy·y·(1 − y), tanh_backward(y, dy) = dy·(1 − y²).
// The test's y is the CPU's fp32 forward of the activation input above (y in
// (0, 1) for sigmoid, (−1, 1) for tanh, with y = 1/2 and 0 at x = 0), dy
// uniform in [−1, 1].
std::vector<Tensor> output_and_dy(const Sizes& s, Rng& rng, Tensor (*forward)(const Tensor&)) {
  std::vector<Tensor> in = binary_inputs(s, rng);
  in[0] = forward(in[0]);
  return in;
}
std::vector<Tensor> sigmoid_backward_inputs(const Sizes& s, Rng& rng) { return output_and_dy(s, rng, cpu::sigmoid); }
std::vector<Tensor> tanh_backward_inputs(const Sizes& s, Rng& rng) { return output_and_dy(s, rng, cpu::tanh); }

// |reference|·factor·u per element, for bounds relative to the result.
std::vector<Tensor> relative(Tensor reference, double factor) {
  double* p = reference.data<double>();
  for (int64_t i = 0; i < reference.numel(); ++i) p[i] = std::abs(p[i]) * factor * kU;
  return {std::move(reference)};
}

// Errors in units of u = 2^-24. expf and tanhf err by at most 2 ulp (CUDA's
// documented bounds, glibc's are lower), and an ulp of v is at most 2u·|v|:
// 4u relative. x itself is exact (the kernel reads the fp32 x the reference
// converts).
//  - sigmoid, x >= 0: e = expf(−x) <= 1 errs 4u·e; 1 + e adds u, and e's
//    error is at most e/(1 + e) <= 1/2 of the sum: 3u; the division u more:
//    4u·|y|. x < 0: e = expf(x), the same 3u for 1 + e, plus e's own 4u in
//    the numerator and the division's u: 8u·|y|. We allow 16u·|y|.
//  - tanh: tanhf's 4u·|y|; we allow 8u·|y| (y = 0 exactly at x = 0).
// Dropping the sign split (1/(1 + e^−x) throughout) would still pass here
// — the inputs stop at |x| = 6, where it only overflows past x < −88 — but a
// wrong formula (1 − y for y, a missing exp sign) is off by O(1).
std::vector<Tensor> sigmoid_tolerance(const Sizes&, const std::vector<Tensor>& in) {
  return relative(cpu::sigmoid(in[0].to(DType::f64)), 16.0);
}
std::vector<Tensor> tanh_tolerance(const Sizes&, const std::vector<Tensor>& in) {
  return relative(cpu::tanh(in[0].to(DType::f64)), 8.0);
}

// sigmoid_backward: dx = (dy·y)·(1 − y) from fp32 y and dy. 1 − y is exact
// for y >= 1/2 (Sterbenz) and rounds by u otherwise; the two products u
// each: 3u·|dx|. We allow 6u·|dx|.
std::vector<Tensor> sigmoid_backward_tolerance(const Sizes&, const std::vector<Tensor>& in) {
  return relative(cpu::sigmoid_backward(in[0].to(DType::f64), in[1].to(DType::f64)), 6.0);
}

// tanh_backward: dx = dy·(1 − y²). y² rounds by u·y², which 1 − y² does not
// shrink: near |y| = 1 the difference cancels and that error is absolute,
// u·y²·|dy| in dx. The subtraction and the product add u·|dx| each (a fused
// multiply-add, as nvcc may emit for 1 − y·y, only removes y²'s rounding).
// |Δdx| <= u·y²·|dy| + 2u·|dx|; we allow twice: 2u·y²·|dy| + 4u·|dx|.
std::vector<Tensor> tanh_backward_tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  std::vector<Tensor> tol = relative(cpu::tanh_backward(in[0].to(DType::f64), in[1].to(DType::f64)), 4.0);
  const float* y = in[0].data<float>();
  const float* dy = in[1].data<float>();
  double* pt = tol[0].data<double>();
  for (int64_t i = 0; i < s[0]; ++i) pt[i] += 2.0 * double(y[i]) * double(y[i]) * std::abs(double(dy[i])) * kU;
  return tol;
}

const Registration sigmoid{activation_op(
    "sigmoid", unary_inputs,
    [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {cpu::sigmoid(in[0].to(DType::f64))};
    },
    sigmoid_tolerance,
    [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {cpu::sigmoid(in[0])}; })};

const Registration sigmoid_backward{activation_op(
    "sigmoid_backward", sigmoid_backward_inputs,
    [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {cpu::sigmoid_backward(in[0].to(DType::f64), in[1].to(DType::f64))};
    },
    sigmoid_backward_tolerance,
    [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {cpu::sigmoid_backward(in[0], in[1])};
    })};

const Registration tanh_op{activation_op(
    "tanh", unary_inputs,
    [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {cpu::tanh(in[0].to(DType::f64))};
    },
    tanh_tolerance, [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {cpu::tanh(in[0])}; })};

const Registration tanh_backward{activation_op(
    "tanh_backward", tanh_backward_inputs,
    [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {cpu::tanh_backward(in[0].to(DType::f64), in[1].to(DType::f64))};
    },
    tanh_backward_tolerance,
    [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {cpu::tanh_backward(in[0], in[1])};
    })};

// ---- mul -------------------------------------------------------------------------
// c = a ⊙ b over n elements: dropout's backward, dy ⊙ mask (ops/dropout.cpp).
// a uniform in [−1, 1]; b uniform in [−2, 2] with every 4th element 0, as a
// mask's dropped ones.
std::vector<Tensor> mul_inputs(const Sizes& s, Rng& rng) {
  Tensor a = Tensor::empty({s[0]}), b = Tensor::empty({s[0]});
  fill_uniform(a, rng, -1.0, 1.0);
  fill_uniform(b, rng, -2.0, 2.0);
  float* pb = b.data<float>();
  for (int64_t i = 0; i < s[0]; i += 4) pb[i] = 0.0f;
  return {std::move(a), std::move(b)};
}
// The product of two fp32 values is exact in double (24 + 24 significant
// bits), and an IEEE multiply rounds it once to nearest: every conforming
// fp32 multiply returns the same bits. So the reference is the CPU's fp32
// product (cpu::dropout_backward, dy ⊙ mask) and the tolerance zero, where a
// double product would be off by up to u·|c|.
std::vector<Tensor> mul_fp32(const Sizes&, const std::vector<Tensor>& in) {
  return {cpu::dropout_backward(in[0], in[1])};
}

const Registration mul{activation_op(
    "mul", mul_inputs,
    [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {mul_fp32(s, in)[0].to(DType::f64)};
    },
    exact, mul_fp32)};

// ---- add -------------------------------------------------------------------------
// c = a + b over n elements: a gradient arriving at a value that already has
// one (autograd's +=, dispatch::add_into). a and b uniform in [−1, 1].
std::vector<Tensor> add_inputs(const Sizes& s, Rng& rng) {
  Tensor a = Tensor::empty({s[0]}), b = Tensor::empty({s[0]});
  fill_uniform(a, rng, -1.0, 1.0);
  fill_uniform(b, rng, -1.0, 1.0);
  return {std::move(a), std::move(b)};
}
// As for mul: the sum of two fp32 values is exact in double, and an IEEE add
// rounds it once to nearest, so every conforming fp32 add returns the same
// bits: the CPU's fp32 sum (cpu::add_into) is the reference, zero tolerance.
std::vector<Tensor> add_fp32(const Sizes&, const std::vector<Tensor>& in) {
  Tensor c = in[0].clone();
  cpu::add_into(c, in[1]);
  return {c};
}

const Registration add{activation_op(
    "add", add_inputs,
    [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {add_fp32(s, in)[0].to(DType::f64)};
    },
    exact, add_fp32)};

// ---- bias_add ------------------------------------------------------------------
// y = x + b broadcast along axis 1; sizes {N, C, S}: x and y (N,C,S), S = H·W
// of an (N,C,H,W) activation, or 1 for an (N,C) matrix; b (C).
std::vector<Tensor> bias_inputs(const Sizes& s, Rng& rng) {
  Tensor x = Tensor::empty({s[0], s[1], s[2]}), b = Tensor::empty({s[1]});
  fill_uniform(x, rng, -1.0, 1.0);
  fill_uniform(b, rng, -1.0, 1.0);
  return {std::move(x), std::move(b)};
}

// (N,C) matrices (S = 1) of 1, 7, 33, 1000 and 1031 elements; NCHW-like
// ones whose S is odd (2·3·7, 3·7·49 = 1029: a float4 spans channels) and a
// multiple of 4 (4·64·16 = 4096); and 1·1031·1049 = 1081519, past the grid
// cap in float4s as for the activations.
const std::vector<Sizes> kBiasTestSizes = {{1, 1, 1}, {7, 1, 1},  {3, 11, 1},  {10, 100, 1},    {1, 1031, 1},
                                           {2, 3, 7}, {3, 7, 49}, {4, 64, 16}, {1, 1031, 1049}};

// One fp32 add of two fp32 values, rounded to nearest: within 2^-24·|x + b|
// of the exact sum (the unit roundoff; exact when it lands in the denormals).
std::vector<Tensor> bias_tolerance(const Sizes&, const std::vector<Tensor>& in) {
  Tensor tol = cpu::bias_add(in[0].to(DType::f64), in[1].to(DType::f64));
  double* p = tol.data<double>();
  for (int64_t i = 0; i < tol.numel(); ++i) p[i] = std::abs(p[i]) * kU;
  return {tol};
}

const Registration bias_add{Op{
    .name = "bias_add",
    .size_names = {"N", "C", "S"},
    .test_sizes = kBiasTestSizes,
    .defaults = {64, 256, 1024},
    .make_inputs = bias_inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{Shape{s[0], s[1], s[2]}}; },
    .reference =
        [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
          return {cpu::bias_add(in[0].to(DType::f64), in[1].to(DType::f64))};
        },
    .tolerance = bias_tolerance,
    // A ResNet-like activation, 64x256x64x64: 64M elements, 256 MiB.
    .bench_sizes = {{64, 256, 4096}},
    .reduction_length = one,
    .cpu_fp32 = [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {cpu::bias_add(in[0], in[1])}; },
    .check_sizes = every_size_at_least_1,
}};

// ---- bias_relu -----------------------------------------------------------------
// y = max(x + b, 0): bias_add's sizes and inputs, the ReLU after it (exact:
// y is the rounded sum or 0), so bias_add's bound. What a device runs for a
// layer whose ReLU is folded into it (nn::Sequential::fold_bias_relu).
Tensor bias_relu_f64(const std::vector<Tensor>& in) {
  return cpu::relu(cpu::bias_add(in[0].to(DType::f64), in[1].to(DType::f64)));
}

const Registration bias_relu{Op{
    .name = "bias_relu",
    .size_names = {"N", "C", "S"},
    .test_sizes = kBiasTestSizes,
    .defaults = {64, 256, 1024},
    .make_inputs = bias_inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{Shape{s[0], s[1], s[2]}}; },
    .reference = [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {bias_relu_f64(in)}; },
    .tolerance = bias_tolerance,
    .bench_sizes = {{64, 256, 4096}},
    .reduction_length = one,
    .cpu_fp32 = [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {cpu::relu(cpu::bias_add(in[0], in[1]))};
    },
    .check_sizes = every_size_at_least_1,
}};

}  // namespace
}  // namespace warpnet::device
