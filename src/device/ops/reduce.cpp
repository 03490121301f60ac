// The row reductions: sum_rows and max_rows take X (N,C) to Y (N), Y[i] the
// sum (the maximum) of row i. What softmax does twice per row, alone: the
// reduce ladder (kernels/reduce/) teaches the reductions, the softmax ladder
// what it costs to do them over the same row. bias_add_backward (at the
// end) sums dY (N,C,S) per channel over N and S: the same question along
// another axis.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "cpu/ops.hpp"
#include "device/ops/shifted_rows.hpp"
#include "device/registry.hpp"

namespace warpnet::device {
namespace {

// Uniform in [-1, 1], row i shifted by +100, -100 or 0 (i % 3): rows of only
// negative numbers catch a maximum that starts from 0 instead of -inf, and
// the mixed signs of the unshifted rows make a sum's cancellation visible.
std::vector<Tensor> inputs(const Sizes& s, Rng& rng) { return {shifted_rows(s[0], s[1], 1.0, rng)}; }

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
// the float4 version's scalar path). N: 1, 3 (one row per shift), 17; and
// 129 and 263, past the 128 rows a one-thread-per-row version puts in a
// block: a second and a third block, the last one partial.
const std::vector<Sizes> kTestSizes = {{1, 1},   {3, 1},   {17, 1},  {1, 7},    {17, 7},    {3, 31},   {17, 31}, {3, 33},
                                       {17, 33}, {1, 100}, {17, 100}, {3, 1000}, {17, 1000}, {1, 1031}, {17, 1031},
                                       {129, 7}, {263, 33}};
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
    .check_sizes = every_size_at_least_1,
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
    .check_sizes = every_size_at_least_1,
}};


// ---- bias_add_backward -----------------------------------------------------------
// dY (N,C,S) → db (C), db[c] = Σ over n and s of dY[n][c][s]: the gradient of
// bias_add's b (S = H·W, 1 for a linear layer). It sits in this family, not
// with bias_add among the elementwise ops: each output is a sum of N·S
// terms, C outputs from N·C·S inputs, and what its versions teach is how
// threads share a sum and which of them read adjacent addresses — the reduce
// ladder's questions — where an elementwise kernel only streams bytes.

// Long channels hide a lost term under the bound (bias_backward_tolerance,
// below): L·eps·Σ|dY| is about L²·eps/2 for dY uniform in [-1, 1], 0.25 at
// L = N·S = 2048 and 1.6 at 5155, where one term is at most 1. So from
// kLongChannel on, dY holds whole numbers in [-8, 8]: every partial sum,
// in any order, is a whole number below 2^24 (10·L with the ends below),
// exact in fp32, and the tolerance is 0 — a term lost anywhere, at the
// join of a split channel or mid-sweep, shows unless it is 0. Each
// channel's first term is +L and its last −L besides, which no lost end
// can hide. Shorter channels keep the plain terms, each of which shows.
// (Past 2^24 / 10 terms, at sizes no test uses, the whole numbers could
// round: there the ends alone are planted, with the plain bound.)
constexpr int64_t kLongChannel = 2048;
constexpr bool exact_channels(int64_t L) { return L >= kLongChannel && 10 * L < (int64_t(1) << 24); }

// Long channels (L = N·S >= kLongChannel): dY made of whole numbers in
// [-8, 8], and the ends of each channel's sum, dY[0][c][0] and
// dY[N-1][c][S-1], set to ±L; where a ReLU's output y masks the terms,
// y = 0.5 there keeps them.
void long_channel_terms(const Sizes& s, Tensor& dy, Rng& rng, Tensor* y = nullptr) {
  const int64_t N = s[0], C = s[1], S = s[2], L = N * S;
  if (L < kLongChannel) return;
  float* d = dy.data<float>();
  if (exact_channels(L))
    for (int64_t i = 0; i < dy.numel(); ++i) d[i] = float(int64_t(rng.below(17)) - 8);
  for (int64_t c = 0; c < C; ++c) {
    const int64_t first = c * S, last = ((N - 1) * C + c) * S + S - 1;
    dy.data<float>()[first] = float(L);
    dy.data<float>()[last] = -float(L);
    if (y) y->data<float>()[first] = y->data<float>()[last] = 0.5f;
  }
}

// dY uniform in [-1, 1]: mixed signs, so a sum's cancellation shows; long
// channels' whole numbers and ends (above).
std::vector<Tensor> bias_backward_inputs(const Sizes& s, Rng& rng) {
  Tensor dy = Tensor::empty({s[0], s[1], s[2]});
  fill_uniform(dy, rng, -1.0, 1.0);
  long_channel_terms(s, dy, rng);
  return {std::move(dy)};
}

// An fp32 sum of L = N·S terms, in any order, errs by at most about
// L·eps·Σ|dY| (eps = 2^-23: sum_rows' bound, with the channel's N·S terms
// as its row); long channels' whole numbers sum exactly: 0.
std::vector<Tensor> bias_backward_tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  const int64_t N = s[0], C = s[1], S = s[2];
  const double l_eps = double(N * S) * 1.2e-7;
  Tensor tol = Tensor::zeros({C}, DType::f64);
  if (exact_channels(N * S)) return {std::move(tol)};
  const float* dy = in[0].data<float>();
  double* t = tol.data<double>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < S; ++i) t[c] += std::abs(double(dy[(n * C + c) * S + i]));
  for (int64_t c = 0; c < C; ++c) t[c] = l_eps * t[c] + 1e-30;
  return {std::move(tol)};
}

// (N,C) matrices (S = 1): 1x1, a column of 7, 33x7, 1031 channels (past
// v1's 128-thread block), 300 rows of 129 channels (four splits in v3);
// small maps (S = 7, 49: a warp's 32 terms straddle planes); 4x64x16 (S a
// multiple of 4); 5x3x1031 and 1x2x4099 (a channel's terms pass v2's 256
// threads several times, ending mid-sweep; two splits in v3).
const std::vector<Sizes> kBiasBackwardTestSizes = {{1, 1, 1},   {7, 1, 1},  {33, 7, 1},   {1, 1031, 1},
                                                   {300, 129, 1}, {2, 3, 7}, {3, 7, 49},   {4, 64, 16},
                                                   {5, 3, 1031},  {1, 2, 4099}};

const Registration bias_add_backward{Op{
    .name = "bias_add_backward",
    .size_names = {"N", "C", "S"},
    .test_sizes = kBiasBackwardTestSizes,
    .defaults = {64, 256, 1024},
    .make_inputs = bias_backward_inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{Shape{s[1]}}; },
    .reference = [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {cpu::bias_add_backward(in[0].to(DType::f64))};
    },
    .tolerance = bias_backward_tolerance,
    // A conv layer's gradient (64x256x64x64, bias_add's bench shape, 256 MiB)
    // and a linear layer's (65536 rows of 1024).
    .bench_sizes = {{64, 256, 4096}, {65536, 1024, 1}},
    .reduction_length = [](const Sizes& s) { return s[0] * s[2]; },
    .cpu_fp32 = [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {cpu::bias_add_backward(in[0])};
    },
    .check_sizes = every_size_at_least_1,
}};

// ---- bias_relu_backward ----------------------------------------------------------
// The backward of bias_relu (y = max(x + b, 0)) from its output: y and dY
// (N,C,S) → dZ (N,C,S), dZ = dY where y > 0, else 0 (the gradient of x),
// and db (C), db[c] = Σ dZ[n][c][s] (the gradient of b). What a ReLU folded
// into its layer runs backward (nn::Sequential::fold_bias_relu).

// y = max(u, 0), u uniform in [-1, 1]: about half the terms masked; dY
// uniform, long channels' whole numbers and ends as bias_add_backward's (y > 0 at the ends).
std::vector<Tensor> bias_relu_backward_inputs(const Sizes& s, Rng& rng) {
  Tensor y = Tensor::empty({s[0], s[1], s[2]}), dy = Tensor::empty({s[0], s[1], s[2]});
  fill_uniform(y, rng, -1.0, 1.0);
  y = cpu::relu(y);
  fill_uniform(dy, rng, -1.0, 1.0);
  long_channel_terms(s, dy, rng, &y);
  return {std::move(y), std::move(dy)};
}

// cpu::bias_relu_backward in f64 from the fp32 inputs: dZ exact (each term
// is dY or 0), db its sums.
cpu::BiasReluGrads bias_relu_backward_f64(const std::vector<Tensor>& in) {
  return cpu::bias_relu_backward(in[0].to(DType::f64), in[1].to(DType::f64));
}

const Registration bias_relu_backward{Op{
    .name = "bias_relu_backward",
    .size_names = {"N", "C", "S"},
    .test_sizes = kBiasBackwardTestSizes,
    .defaults = {64, 256, 1024},
    .make_inputs = bias_relu_backward_inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{Shape{s[0], s[1], s[2]}, Shape{s[1]}}; },
    .reference = [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      cpu::BiasReluGrads g = bias_relu_backward_f64(in);
      return {std::move(g.dx), std::move(g.db)};
    },
    // dZ exact (a selection); db the bias gradient's bound on the masked terms.
    .tolerance = [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      const Tensor masked = bias_relu_backward_f64(in).dx.to(DType::f32);
      return {Tensor::zeros({s[0], s[1], s[2]}, DType::f64), bias_backward_tolerance(s, {masked})[0]};
    },
    .bench_sizes = {{64, 256, 4096}, {65536, 1024, 1}},
    .reduction_length = [](const Sizes& s) { return s[0] * s[2]; },
    .cpu_fp32 = [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      cpu::BiasReluGrads g = cpu::bias_relu_backward(in[0], in[1]);
      return {std::move(g.dx), std::move(g.db)};
    },
    .check_sizes = every_size_at_least_1,
}};

}  // namespace
}  // namespace warpnet::device
