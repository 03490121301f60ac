// The elementwise ops. The activations relu, gelu and their backwards work on
// a flat tensor of n elements (an activation does not care about shape): a
// forward takes x (n) to y (n); a backward takes x (n), the forward's input,
// and dy (n) to dx (n). bias_add adds b (C) along axis 1 of x (N,C,S). The
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
            .cpu_fp32 = cpu_fp32};
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

// ---- bias_add ------------------------------------------------------------------
// y = x + b broadcast along axis 1; sizes {N, C, S}: x and y (N,C,S), S = H·W
// of an (N,C,H,W) activation, or 1 for an (N,C) matrix; b (C).
std::vector<Tensor> bias_inputs(const Sizes& s, Rng& rng) {
  Tensor x = Tensor::empty({s[0], s[1], s[2]}), b = Tensor::empty({s[1]});
  fill_uniform(x, rng, -1.0, 1.0);
  fill_uniform(b, rng, -1.0, 1.0);
  return {std::move(x), std::move(b)};
}

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
    // (N,C) matrices (S = 1) of 1, 7, 33, 1000 and 1031 elements; NCHW-like
    // ones whose S is odd (2·3·7, 3·7·49 = 1029: a float4 spans channels)
    // and a multiple of 4 (4·64·16 = 4096); and 1·1031·1049 = 1081519, past
    // the grid cap in float4s as for the activations.
    .test_sizes = {{1, 1, 1}, {7, 1, 1}, {3, 11, 1}, {10, 100, 1}, {1, 1031, 1},
                   {2, 3, 7}, {3, 7, 49}, {4, 64, 16}, {1, 1031, 1049}},
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
}};

}  // namespace
}  // namespace warpnet::device
