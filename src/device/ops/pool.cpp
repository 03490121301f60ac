// The pooling ops, all with sizes {N, C, H, W, kernel, stride, padding}:
//   max_pool2d           x (N,C,H,W) -> y (N,C,P,Q)
//   max_pool2d_backward  x (N,C,H,W), dy (N,C,P,Q) -> dx (N,C,H,W)
//   avg_pool2d           x (N,C,H,W) -> y (N,C,P,Q)
//   avg_pool2d_backward  dy (N,C,P,Q) -> dx (N,C,H,W)
// Square windows of kernel² pixels; P, Q are the floor-mode extents. Max
// pooling's backward takes x, not the CPU forward's argmax: the kernels
// recompute each window's winner (as cuDNN does from x and y), so the device
// forward has one output. The references are src/cpu/pool2d.cpp's functions,
// in double from the same fp32 values the kernels read.
#include <cmath>
#include <string>
#include <vector>

#include "cpu/ops.hpp"
#include "device/registry.hpp"

namespace warpnet::device {
namespace {

cpu::Pool2dParams params(const Sizes& s) { return {int(s[4]), int(s[5]), int(s[6])}; }
int64_t out_extent(int64_t in, const Sizes& s) { return cpu::conv_out_size(in, s[4], {int(s[5]), int(s[6]), 1}); }
Shape x_shape(const Sizes& s) { return Shape{s[0], s[1], s[2], s[3]}; }
Shape y_shape(const Sizes& s) { return Shape{s[0], s[1], out_extent(s[2], s), out_extent(s[3], s)}; }

// Every extent and the stride at least 1, padding at most half the window
// (each window then holds a pixel), an output that is not empty.
void check_sizes(const Op& op, const Sizes& s) {
  require_at_least(op, s, {1, 1, 1, 1, 1, 1, 0});
  WN_CHECK(s[6] <= s[4] / 2, op.name, ": padding = ", s[6], " at ", describe_sizes(op, s),
           ": it must be at most kernel / 2");
  const Shape y = y_shape(s);
  WN_CHECK(y[2] >= 1 && y[3] >= 1, op.name, ": the output would be empty at ", describe_sizes(op, s),
           ": the padded input must hold one window");
}

// Integers in [lo, hi], every value exact in fp32.
Tensor integers(const Shape& shape, Rng& rng, int lo, int hi) {
  Tensor t = Tensor::empty(shape);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = float(lo + int64_t(rng.below(uint64_t(hi - lo + 1))));
  return t;
}
Tensor uniform(const Shape& shape, Rng& rng) {
  Tensor t = Tensor::empty(shape);
  fill_uniform(t, rng, -1.0, 1.0);
  return t;
}

// x for max pooling: integers in [-4, 4], so most 2x2 and 3x3 windows hold a
// tie for their maximum and the tie rule (the first in row-major order wins,
// cpu::max_pool2d) is tested, not just the argmax of distinct values. They
// are negative as often as not, so a kernel that let padding compete as a 0
// would be caught on the border windows whose pixels are all negative.
Tensor tied_x(const Sizes& s, Rng& rng) { return integers(x_shape(s), rng, -4, 4); }

std::vector<Tensor> max_inputs(const Sizes& s, Rng& rng) { return {tied_x(s, rng)}; }
// x as above; dy nonzero integers in [-8, 8] (0 excluded: a dy of 0 routed to
// the wrong pixel would go unseen). Every dx element is a sum of at most
// ceil(kernel/stride)² of them, exact in fp32 in any order: the reference in
// double must then be matched exactly.
std::vector<Tensor> max_backward_inputs(const Sizes& s, Rng& rng) {
  Tensor x = tied_x(s, rng), dy = integers(y_shape(s), rng, -8, 7);
  float* p = dy.data<float>();
  for (int64_t i = 0; i < dy.numel(); ++i) p[i] += p[i] >= 0.0f ? 1.0f : 0.0f;  // [-8, -1] and [1, 8]
  return {std::move(x), std::move(dy)};
}
std::vector<Tensor> avg_inputs(const Sizes& s, Rng& rng) { return {uniform(x_shape(s), rng)}; }
std::vector<Tensor> avg_backward_inputs(const Sizes& s, Rng& rng) { return {uniform(y_shape(s), rng)}; }

// Max pooling picks one of its inputs (forward) and adds a few exact
// integers (backward, above): zero tolerance. A wrong tie-break or a padded
// pixel that wins moves a whole value: one wrong element is a bug.
std::vector<Tensor> zeros_like_y(const Sizes& s, const std::vector<Tensor>&) {
  return {Tensor::zeros(y_shape(s), DType::f64)};
}
std::vector<Tensor> zeros_like_x(const Sizes& s, const std::vector<Tensor>&) {
  return {Tensor::zeros(x_shape(s), DType::f64)};
}

// ---- average pooling's error bound -----------------------------------------
// An fp32 kernel sums L terms t_j in some order, then multiplies by
// fl(1/kernel²) (1/4 is exact, 1/9 is not). In units of u = 2^-24: the sum
// errs by at most (L − 1)·u·Σ|t_j|, the rounded scale by u relative, the
// product by u: in all (L + 1)·u·scale·Σ|t_j| to first order. Forward: the
// terms are the window's pixels, L <= kernel². Backward: the dy of the
// windows covering the pixel, L <= ceil(kernel/stride)². scale·Σ|t_j| is the
// op itself applied to |input|, in double. We allow twice the bound, which
// also covers a version that scales each term before adding, as the CPU
// does (one more rounding per term: (2L − 1)·u).
// A window off by one pixel, or a missing covering window, errs by about one
// term's share, ~scale·|t|, far above it at these L.
constexpr double kU = 0x1p-24;
int64_t covering_count(const Sizes& s) {
  const int64_t per_axis = (s[4] + s[5] - 1) / s[5];  // ceil(kernel / stride)
  return per_axis * per_axis;
}
Tensor abs_of(const Tensor& t) {
  Tensor a = t.to(DType::f64);
  double* p = a.data<double>();
  for (int64_t i = 0; i < a.numel(); ++i) p[i] = std::abs(p[i]);
  return a;
}
Tensor scaled(Tensor t, double factor) {
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] *= factor;
  return t;
}
std::vector<Tensor> avg_tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  const double L = double(s[4] * s[4]);
  return {scaled(cpu::avg_pool2d(abs_of(in[0]), params(s)), 2.0 * (L + 1.0) * kU)};
}
std::vector<Tensor> avg_backward_tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  const double L = double(covering_count(s));
  return {scaled(cpu::avg_pool2d_backward(abs_of(in[0]), x_shape(s), params(s)), 2.0 * (L + 1.0) * kU)};
}

// (N, C, H, W, kernel, stride, padding). Odd planes (7x9, 9x7) and 28x28
// (LeNet's), a 1x1 image (the window reaches past it on every side); kernels
// 2 and 3 at strides 1 (windows overlap: backward sums several), 2 and 3
// (stride > kernel 2: some pixels in no window, their dx 0); padding 0 and 1.
// N·C·H·W runs from 3 to 4704, several 256-thread blocks.
const std::vector<Sizes> kTestSizes = {
    {1, 3, 1, 1, 3, 1, 1},   {2, 3, 1, 1, 2, 1, 1},   {1, 3, 1, 1, 2, 2, 1},   {1, 3, 7, 9, 2, 2, 0},
    {2, 3, 7, 9, 3, 1, 1},   {1, 3, 7, 9, 3, 2, 1},   {1, 3, 9, 7, 2, 1, 1},   {2, 3, 7, 9, 2, 3, 1},
    {2, 3, 7, 9, 3, 3, 0},   {1, 3, 28, 28, 2, 2, 0}, {2, 3, 28, 28, 3, 2, 1}, {1, 3, 28, 28, 3, 1, 1},
    {2, 3, 28, 28, 2, 3, 0},
};
const std::vector<std::string> kSizeNames = {"N", "C", "H", "W", "kernel", "stride", "padding"};
// ResNet's stem pool (3x3, stride 2, padding 1 on 112x112x64): timed at a
// batch of 64, 205 MB of x.
const Sizes kDefaults = {32, 64, 56, 56, 3, 2, 1};
const std::vector<Sizes> kBenchSizes = {{64, 64, 112, 112, 3, 2, 1}};

const Registration max_pool2d{Op{
    .name = "max_pool2d",
    .size_names = kSizeNames,
    .test_sizes = kTestSizes,
    .defaults = kDefaults,
    .make_inputs = max_inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{y_shape(s)}; },
    .reference =
        [](const Sizes& s, const std::vector<Tensor>& in) {
          return std::vector<Tensor>{cpu::max_pool2d(in[0].to(DType::f64), params(s)).y};
        },
    .tolerance = zeros_like_y,
    .bench_sizes = kBenchSizes,
    .reduction_length = [](const Sizes&) { return int64_t(1); },  // a pick, no sum
    .cpu_fp32 =
        [](const Sizes& s, const std::vector<Tensor>& in) {
          return std::vector<Tensor>{cpu::max_pool2d(in[0], params(s)).y};
        },
    .check_sizes = check_sizes,
}};

// The CPU's backward takes the forward's argmax; the reference computes it
// from the same x, so a kernel whose winners differ (ties, padding) fails.
std::vector<Tensor> max_backward(const Sizes& s, const std::vector<Tensor>& in, DType dtype) {
  const cpu::MaxPoolResult forward = cpu::max_pool2d(in[0].to(dtype), params(s));
  return {cpu::max_pool2d_backward(in[1].to(dtype), forward.argmax, x_shape(s))};
}

const Registration max_pool2d_backward{Op{
    .name = "max_pool2d_backward",
    .size_names = kSizeNames,
    .test_sizes = kTestSizes,
    .defaults = kDefaults,
    .make_inputs = max_backward_inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{x_shape(s)}; },
    .reference = [](const Sizes& s, const std::vector<Tensor>& in) { return max_backward(s, in, DType::f64); },
    .tolerance = zeros_like_x,
    .bench_sizes = kBenchSizes,
    .reduction_length = covering_count,
    .cpu_fp32 = [](const Sizes& s, const std::vector<Tensor>& in) { return max_backward(s, in, DType::f32); },
    .check_sizes = check_sizes,
}};

const Registration avg_pool2d{Op{
    .name = "avg_pool2d",
    .size_names = kSizeNames,
    .test_sizes = kTestSizes,
    .defaults = kDefaults,
    .make_inputs = avg_inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{y_shape(s)}; },
    .reference =
        [](const Sizes& s, const std::vector<Tensor>& in) {
          return std::vector<Tensor>{cpu::avg_pool2d(in[0].to(DType::f64), params(s))};
        },
    .tolerance = avg_tolerance,
    .bench_sizes = kBenchSizes,
    .reduction_length = [](const Sizes& s) { return s[4] * s[4]; },
    .cpu_fp32 =
        [](const Sizes& s, const std::vector<Tensor>& in) {
          return std::vector<Tensor>{cpu::avg_pool2d(in[0], params(s))};
        },
    .check_sizes = check_sizes,
}};

const Registration avg_pool2d_backward{Op{
    .name = "avg_pool2d_backward",
    .size_names = kSizeNames,
    .test_sizes = kTestSizes,
    .defaults = kDefaults,
    .make_inputs = avg_backward_inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{x_shape(s)}; },
    .reference =
        [](const Sizes& s, const std::vector<Tensor>& in) {
          return std::vector<Tensor>{cpu::avg_pool2d_backward(in[0].to(DType::f64), x_shape(s), params(s))};
        },
    .tolerance = avg_backward_tolerance,
    .bench_sizes = kBenchSizes,
    .reduction_length = covering_count,
    .cpu_fp32 =
        [](const Sizes& s, const std::vector<Tensor>& in) {
          return std::vector<Tensor>{cpu::avg_pool2d_backward(in[0], x_shape(s), params(s))};
        },
    .check_sizes = check_sizes,
}};

}  // namespace
}  // namespace warpnet::device
