// The fused optimizer updates, one op per optimizer. Each takes the parameter
// w, its state and its gradient g, all (n), and a small hyperparameter
// buffer, and returns the updated tensors; the kernels may be handed the same
// pointer for an input and its updated output (in place, the usual case), but
// the registry checks them out of place.
//   sgd_momentum: {w, v, g, hyper = {lr, momentum, weight_decay}} → {w', v'}
//   adam:         {w, m, v, g, hyper = {step_size, beta1, beta2, eps_hat}} → {w', m', v'}
// The references are the CPU optimizers' own arithmetic, cpu::sgd_momentum_update
// and cpu::adam_update (src/cpu/optim.cpp, called by nn::Sgd and nn::Adam), in
// double from the same fp32 values the kernels read.
#include <cmath>

#include "cpu/ops.hpp"
#include "device/registry.hpp"

namespace warpnet::device {
namespace {

constexpr double kU = 0x1p-24;  // the fp32 unit roundoff

Tensor uniform(int64_t n, Rng& rng, double lo, double hi) {
  Tensor t = Tensor::empty({n});
  fill_uniform(t, rng, lo, hi);
  return t;
}

// Flat f64 copies of fp32 tensors, for the references and the bounds.
Tensor f64(const Tensor& t) { return t.to(DType::f64); }

// n: 1, 7, 33 (not whole float4s, past a warp), 1000 (whole float4s), 1031
// and 4099 (a tail of 3, several blocks), and 1081351 = 4·1056·256 + 7, past
// the grid cap (1056 blocks of 256, optim_registration.hpp) in float4s too,
// so both versions' grid-stride loops come round again, plus a tail of 3.
const std::vector<Sizes> kTestSizes = {{1}, {7}, {33}, {1000}, {1031}, {4099}, {1081351}};
// 16M parameters: 64 MiB per tensor, past any L2; memory-bound.
const std::vector<Sizes> kBenchSizes = {{1 << 24}};
// No sums: each output element comes from its own inputs.
int64_t one(const Sizes&) { return 1; }

std::vector<Shape> flat_outputs(const Sizes& s, int count) { return std::vector<Shape>(size_t(count), Shape{s[0]}); }

// ---- sgd_momentum --------------------------------------------------------------
// w, g uniform in [-1, 1], v (the velocity) in [-0.5, 0.5]; the
// hyperparameters drawn too: lr in [0.01, 0.5], momentum in [0.5, 0.99],
// weight decay in [0, 1e-3].
std::vector<Tensor> sgd_inputs(const Sizes& s, Rng& rng) {
  Tensor w = uniform(s[0], rng, -1.0, 1.0), v = uniform(s[0], rng, -0.5, 0.5), g = uniform(s[0], rng, -1.0, 1.0);
  const float lr = float(rng.uniform(0.01, 0.5)), momentum = float(rng.uniform(0.5, 0.99)),
              weight_decay = float(rng.uniform(0.0, 1e-3));
  return {std::move(w), std::move(v), std::move(g), Tensor::from<float>({3}, {lr, momentum, weight_decay})};
}

std::vector<Tensor> sgd_reference(const Sizes&, const std::vector<Tensor>& in) {
  Tensor w = f64(in[0]), v = f64(in[1]);
  const float* h = in[3].data<float>();
  cpu::sgd_momentum_update(w, v, f64(in[2]), h[0], h[1], h[2]);
  return {std::move(w), std::move(v)};
}

// The kernels compute v' = (μ·v + g) + wd·w and w' = w − lr·v' in fp32
// (an FMA may merge a product into a sum: fewer roundings, not more). With
// A = |μ·v| + |g| + |wd·w|, each of v's 4 roundings (2 products, 2 adds)
// errs by at most u·A, so |Δv'| <= 4u·A; then lr·v' carries lr·Δv' plus its
// own rounding u·|lr·v'|, and the subtraction u·|w'|:
// |Δw'| <= u·(4·|lr|·A + |lr·v'| + |w'|). We allow twice each. A wrong
// operand (v for v', a dropped weight-decay term: wd·w up to 1e-3) errs by
// far more, except where the term itself is below the bound.
std::vector<Tensor> sgd_tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  const std::vector<Tensor> want = sgd_reference(s, in);
  const float* w = in[0].data<float>();
  const float* v = in[1].data<float>();
  const float* g = in[2].data<float>();
  const float* h = in[3].data<float>();
  const double lr = h[0], mu = h[1], wd = h[2];
  Tensor tol_w = Tensor::empty({s[0]}, DType::f64), tol_v = Tensor::empty({s[0]}, DType::f64);
  const double* w_new = want[0].data<double>();
  const double* v_new = want[1].data<double>();
  double* tw = tol_w.data<double>();
  double* tv = tol_v.data<double>();
  for (int64_t i = 0; i < s[0]; ++i) {
    const double A = std::abs(mu * v[i]) + std::abs(double(g[i])) + std::abs(wd * w[i]);
    tv[i] = 8.0 * kU * A;
    tw[i] = kU * (8.0 * lr * A + 2.0 * std::abs(lr * v_new[i]) + 2.0 * std::abs(w_new[i]));
  }
  return {std::move(tol_w), std::move(tol_v)};
}

const Registration sgd_momentum{Op{
    .name = "sgd_momentum",
    .size_names = {"n"},
    .test_sizes = kTestSizes,
    .defaults = {1 << 20},
    .make_inputs = sgd_inputs,
    .output_shapes = [](const Sizes& s) { return flat_outputs(s, 2); },
    .reference = sgd_reference,
    .tolerance = sgd_tolerance,
    .bench_sizes = kBenchSizes,
    .reduction_length = one,
    .cpu_fp32 = [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      Tensor w = in[0].clone(), v = in[1].clone();
      const float* h = in[3].data<float>();
      cpu::sgd_momentum_update(w, v, in[2], h[0], h[1], h[2]);
      return {std::move(w), std::move(v)};
    },
    .check_sizes = every_size_at_least_1,
}};

// ---- adam ------------------------------------------------------------------------
// w, g uniform in [-1, 1], m in [-0.1, 0.1] and v = m² + [0, 0.01] (a second
// moment is at least about the square of the first, so the update α·m/√v
// stays near α as in training). The hyperparameters are those of a step t
// in [1, 1000] with lr in [1e-4, 1e-2], β1 = 0.9, β2 = 0.999, ε = 1e-8, the
// bias corrections folded on the host exactly as nn::Adam::step does:
// step_size = lr·√(1−β2^t)/(1−β1^t), eps_hat = ε·√(1−β2^t).
// Every 7th element from the 4th is a unit no gradient has reached (m = v =
// g = 0: the update is 0/ε̂ = 0, NaN without ε̂), and every 7th from the 6th
// has a second moment near ε̂² (g = 0, v = ε̂², m = 1e-9: ε̂ is half of d,
// so a version that drops it doubles the update): elsewhere ε̂ is far below
// √v and a version without it would pass.
std::vector<Tensor> adam_inputs(const Sizes& s, Rng& rng) {
  Tensor w = uniform(s[0], rng, -1.0, 1.0), m = uniform(s[0], rng, -0.1, 0.1), v = uniform(s[0], rng, 0.0, 0.01);
  Tensor g = uniform(s[0], rng, -1.0, 1.0);
  const double lr = rng.uniform(1e-4, 1e-2), t = double(1 + rng.below(1000));
  const double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  const double c1 = 1.0 - std::pow(beta1, t), c2 = 1.0 - std::pow(beta2, t);
  const float step_size = float(lr * std::sqrt(c2) / c1), eps_hat = float(eps * std::sqrt(c2));
  float* pm = m.data<float>();
  float* pv = v.data<float>();
  float* pg = g.data<float>();
  for (int64_t i = 0; i < s[0]; ++i) {
    pv[i] += pm[i] * pm[i];
    if (i % 7 == 3) pm[i] = pv[i] = pg[i] = 0.0f;
    if (i % 7 == 5) pm[i] = 1e-9f, pv[i] = eps_hat * eps_hat, pg[i] = 0.0f;
  }
  return {std::move(w), std::move(m), std::move(v), std::move(g),
          Tensor::from<float>({4}, {step_size, float(beta1), float(beta2), eps_hat})};
}

std::vector<Tensor> adam_reference(const Sizes&, const std::vector<Tensor>& in) {
  Tensor w = f64(in[0]), m = f64(in[1]), v = f64(in[2]);
  const float* h = in[4].data<float>();
  cpu::adam_update(w, m, v, f64(in[3]), h[0], h[1], h[2], h[3]);
  return {std::move(w), std::move(m), std::move(v)};
}

// The kernels compute, in fp32, m' = β1·m + (1−β1)·g, v' = β2·v + (1−β2)·g·g,
// d = √v' + ε̂ and w' = w − (α·m')/d. In units of u = 2^-24:
//  - m': 4 roundings (β1·m, 1−β1, the product with g, the sum), each at most
//    u·Am with Am = |β1·m| + |(1−β1)·g|: |Δm'| <= 4u·Am (m' may cancel, so
//    the bound is on Am, not on |m'|).
//  - v': every term >= 0, no cancellation: β2·v errs by u, (1−β2)·g·g by 3u
//    (1−β2, two products), the sum by u, each relative to a part of v':
//    |Δv'| <= 4u·v'.
//  - d: √ halves v's relative 4u and rounds once (sqrtf is correctly rounded
//    on the GPU by default and in glibc): 3u; the add of ε̂: 4u relative.
//  - α·m' carries α·Δm' and rounds (u·|α·m'|); the division adds d's 4u and
//    its own u: |Δupd| <= u·(4·α·Am/d + 6·|upd|), upd = α·m'/d; the final
//    subtraction u·|w'|.
// We allow twice each: 8u·Am, 8u·v', u·(8·α·Am/d + 12·|upd| + 2·|w'|). A
// missing bias-correction fold, a swapped β, ε̂ inside the root or left out
// (adam_inputs' elements near ε̂² and at 0) would move the update by a large
// fraction of itself, far outside.
std::vector<Tensor> adam_tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  const std::vector<Tensor> want = adam_reference(s, in);
  const float* m = in[1].data<float>();
  const float* g = in[3].data<float>();
  const float* h = in[4].data<float>();
  const double a = h[0], b1 = h[1], e = h[3];
  Tensor tol_w = Tensor::empty({s[0]}, DType::f64), tol_m = Tensor::empty({s[0]}, DType::f64),
         tol_v = Tensor::empty({s[0]}, DType::f64);
  const double* w_new = want[0].data<double>();
  const double* m_new = want[1].data<double>();
  const double* v_new = want[2].data<double>();
  double* tw = tol_w.data<double>();
  double* tm = tol_m.data<double>();
  double* tv = tol_v.data<double>();
  for (int64_t i = 0; i < s[0]; ++i) {
    const double Am = std::abs(b1 * m[i]) + std::abs((1.0 - b1) * g[i]);
    const double d = std::sqrt(v_new[i]) + e, update = a * m_new[i] / d;
    tm[i] = 8.0 * kU * Am;
    tv[i] = 8.0 * kU * v_new[i];
    tw[i] = kU * (8.0 * a * Am / d + 12.0 * std::abs(update) + 2.0 * std::abs(w_new[i]));
  }
  return {std::move(tol_w), std::move(tol_m), std::move(tol_v)};
}

const Registration adam{Op{
    .name = "adam",
    .size_names = {"n"},
    .test_sizes = kTestSizes,
    .defaults = {1 << 20},
    .make_inputs = adam_inputs,
    .output_shapes = [](const Sizes& s) { return flat_outputs(s, 3); },
    .reference = adam_reference,
    .tolerance = adam_tolerance,
    .bench_sizes = kBenchSizes,
    .reduction_length = one,
    .cpu_fp32 = [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      Tensor w = in[0].clone(), m = in[1].clone(), v = in[2].clone();
      const float* h = in[4].data<float>();
      cpu::adam_update(w, m, v, in[3], h[0], h[1], h[2], h[3]);
      return {std::move(w), std::move(m), std::move(v)};
    },
    .check_sizes = every_size_at_least_1,
}};

}  // namespace
}  // namespace warpnet::device
