// The matmul op: C (M,N) = A (M,K) @ B (K,N), all row-major fp32.
#include <cmath>

#include "cpu/ops.hpp"
#include "device/registry.hpp"

namespace warpnet::device {
namespace {

// Uniform in [-1, 1]. Kernels that read fp16 get these rounded to fp16
// (device::make_inputs), so the products stay exact and the fp32-summation
// bound below holds for every version.
Tensor uniform(Shape shape, Rng& rng) {
  Tensor t = Tensor::empty(std::move(shape));
  fill_uniform(t, rng, -1.0, 1.0);
  return t;
}

std::vector<Tensor> inputs(const Sizes& s, Rng& rng) { return {uniform({s[0], s[2]}, rng), uniform({s[2], s[1]}, rng)}; }

// In double, so the reference's own rounding is negligible against the bound.
Tensor reference(const std::vector<Tensor>& in) { return cpu::matmul(in[0].to(DType::f64), in[1].to(DType::f64)); }

Tensor absolute(const Tensor& t) {
  Tensor out = t.to(DType::f64);
  double* p = out.data<double>();
  for (int64_t i = 0; i < out.numel(); ++i) p[i] = std::abs(p[i]);
  return out;
}

// An fp32 K-term dot product, summed in any order, with or without FMA, errs
// by at most about K·eps·Σ|a·b| (the classic bound; eps = 2^-23 ≈ 1.2e-7).
Tensor tolerance(const std::vector<Tensor>& in) {
  Tensor bound = cpu::matmul(absolute(in[0]), absolute(in[1]));
  const double k_eps = double(in[0].dim(1)) * 1.2e-7;
  double* p = bound.data<double>();
  for (int64_t i = 0; i < bound.numel(); ++i) p[i] = k_eps * p[i] + 1e-30;
  return bound;
}

const Registration matmul{Op{
    .name = "matmul",
    .size_names = {"M", "N", "K"},
    // 1 and 7 are below any tile, 33 just past two, 127x129x65 odd in every direction.
    .test_sizes = {{1, 1, 1}, {7, 7, 7}, {33, 33, 33}, {127, 129, 65}},
    .make_inputs = inputs,
    .output_shape = [](const Sizes& s) { return Shape{s[0], s[1]}; },
    .reference = reference,
    .tolerance = tolerance,
}};

}  // namespace
}  // namespace warpnet::device
