// The row reductions: sum_rows and max_rows take X (N,C) to Y (N), Y[i] the
// sum (the maximum) of row i. What softmax does twice per row, alone: the
// reduce ladder (kernels/reduce/) teaches the reductions, the softmax ladder
// what it costs to do them over the same row.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "device/registry.hpp"

namespace warpnet::device {
namespace {

// Uniform in [-1, 1], row i shifted by +100, -100 or 0 (i % 3): rows of only
// negative numbers catch a maximum that starts from 0 instead of -inf, and
// the mixed signs of the unshifted rows make a sum's cancellation visible.
std::vector<Tensor> inputs(const Sizes& s, Rng& rng) {
  const int64_t N = s[0], C = s[1];
  Tensor x = Tensor::empty({N, C});
  fill_uniform(x, rng, -1.0, 1.0);
  float* p = x.data<float>();
  constexpr float kShift[3] = {100.0f, -100.0f, 0.0f};
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < C; ++j) p[i * C + j] += kShift[i % 3];
  return {std::move(x)};
}

// f(row i of x) for every row, in T; x: (N,C) fp32. Y: (N).
template <class T, class F>
Tensor per_row(const Sizes& s, const Tensor& x, F f) {
  const int64_t N = s[0], C = s[1];
  Tensor y = Tensor::empty({N}, std::is_same_v<T, double> ? DType::f64 : DType::f32);
  const float* px = x.data<float>();
  T* py = y.data<T>();
  for (int64_t i = 0; i < N; ++i) py[i] = f(px + i * C, px + (i + 1) * C);
  return y;
}

template <class T>
T sum(const float* begin, const float* end) {
  T acc = 0;
  for (const float* p = begin; p != end; ++p) acc += T(*p);
  return acc;
}
float maximum(const float* begin, const float* end) { return *std::max_element(begin, end); }

// An fp32 sum of C terms, in any order, errs by at most about C·eps·Σ|x|
// (eps = 2^-23 ≈ 1.2e-7: twice the unit roundoff, the same bound as matmul's).
std::vector<Tensor> sum_tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  const double c_eps = double(s[1]) * 1.2e-7;
  return {per_row<double>(s, in[0], [&](const float* begin, const float* end) {
    double abs_sum = 0;
    for (const float* p = begin; p != end; ++p) abs_sum += std::abs(double(*p));
    return c_eps * abs_sum + 1e-30;
  })};
}

// The maximum is one of the inputs, whatever the order: exact, zero tolerance.
std::vector<Tensor> max_tolerance(const Sizes& s, const std::vector<Tensor>&) { return {Tensor::zeros({s[0]}, DType::f64)}; }

// C: 1, 7, 31 and 33 around a warp, 100, 1000, 1031 (not a multiple of 4:
// the float4 version's scalar path). N: 1, 3 (one row per shift), 17.
const std::vector<Sizes> kTestSizes = {{1, 1},   {3, 1},   {17, 1},  {1, 7},    {17, 7},    {3, 31},   {17, 31}, {3, 33},
                                       {17, 33}, {1, 100}, {17, 100}, {3, 1000}, {17, 1000}, {1, 1031}, {17, 1031}};
// Memory-bound: many short rows, fewer long ones (256 MiB and 1 GiB read).
const std::vector<Sizes> kBenchSizes = {{65536, 1024}, {8192, 32768}};

const Registration sum_rows{Op{
    .name = "sum_rows",
    .size_names = {"N", "C"},
    .test_sizes = kTestSizes,
    .defaults = {4096, 1024},
    .make_inputs = inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{Shape{s[0]}}; },
    .reference = [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {per_row<double>(s, in[0], sum<double>)}; },
    .tolerance = sum_tolerance,
    .bench_sizes = kBenchSizes,
    .reduction_length = [](const Sizes& s) { return s[1]; },
    // The plain fp32 loop, in row order: warpnet's CPU has no row-sum op.
    .cpu_fp32 = [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {per_row<float>(s, in[0], sum<float>)}; },
}};

const Registration max_rows{Op{
    .name = "max_rows",
    .size_names = {"N", "C"},
    .test_sizes = kTestSizes,
    .defaults = {4096, 1024},
    .make_inputs = inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{Shape{s[0]}}; },
    .reference = [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {per_row<double>(s, in[0], maximum)}; },
    .tolerance = max_tolerance,
    .bench_sizes = kBenchSizes,
    .reduction_length = [](const Sizes& s) { return s[1]; },
    .cpu_fp32 = [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {per_row<float>(s, in[0], maximum)}; },
}};

}  // namespace
}  // namespace warpnet::device
