// The conv2d op: y (N,K,P,Q) = x (N,C,H,W) convolved with w (K,C,R,S), fp32,
// NCHW, cross-correlation as every framework computes it:
//   y[n,k,p,q] = sum over c,r,s of x[n, c, p·stride − pad + r·dil, q·stride − pad + s·dil] · w[k,c,r,s]
// (taps outside the image read zero padding). Stride, padding and dilation are
// square (the same along H and W): that covers the networks warpnet trains and
// keeps the sizes at ten. There is no bias: adding one is an elementwise kernel
// (issue 5, item 3), as cuDNN keeps it apart from the convolution too.
#include <cmath>

#include "cpu/ops.hpp"
#include "device/registry.hpp"

namespace warpnet::device {
namespace {

// Sizes: {N, C, H, W, K, R, S, stride, pad, dilation}.
cpu::Conv2dParams params(const Sizes& s) {
  return cpu::Conv2dParams{.stride = int(s[7]), .padding = int(s[8]), .dilation = int(s[9])};
}
Shape x_shape(const Sizes& s) { return {s[0], s[1], s[2], s[3]}; }
Shape w_shape(const Sizes& s) { return {s[4], s[1], s[5], s[6]}; }
Shape y_shape(const Sizes& s) {
  return {s[0], s[4], cpu::conv_out_size(s[2], s[5], params(s)), cpu::conv_out_size(s[3], s[6], params(s))};
}

// Every extent at least 1 (pad at least 0), an output that is not empty, and
// every array a kernel indexes in int within reach (ConvShape's ints): the
// tensors, and v3's im2col matrix of one image, (C·R·S, P·Q). The same for
// the four conv ops: they share the sizes.
void check_sizes(const Op& op, const Sizes& s) {
  require_at_least(op, s, {1, 1, 1, 1, 1, 1, 1, 1, 0, 1});
  const Shape y = y_shape(s);
  WN_CHECK(y[2] >= 1 && y[3] >= 1, op.name, ": the output would be empty at ", describe_sizes(op, s),
           ": the padded input (H + 2·pad, W + 2·pad) must hold the filter's span (dilation·(R − 1) + 1, "
           "dilation·(S − 1) + 1)");
  require_indexable(op, s, x_shape(s), "the input");
  require_indexable(op, s, w_shape(s), "the filter");
  require_indexable(op, s, y, "the output");
  require_indexable(op, s, Shape{s[1] * s[5] * s[6], y[2] * y[3]}, "the im2col matrix of one image");
}

// Uniform in [-1, 1], as matmul's inputs.
Tensor uniform(Shape shape, Rng& rng) {
  Tensor t = Tensor::empty(std::move(shape));
  fill_uniform(t, rng, -1.0, 1.0);
  return t;
}

std::vector<Tensor> inputs(const Sizes& s, Rng& rng) {
  Tensor x = uniform(x_shape(s), rng);
  Tensor w = uniform(w_shape(s), rng);
  return {std::move(x), std::move(w)};
}

// In double, so the reference's own rounding is negligible against the bound.
std::vector<Tensor> reference(const Sizes& s, const std::vector<Tensor>& in) {
  return {cpu::conv2d(in[0].to(DType::f64), in[1].to(DType::f64), Tensor{}, params(s))};
}

Tensor absolute(const Tensor& t) {
  Tensor out = t.to(DType::f64);
  double* p = out.data<double>();
  for (int64_t i = 0; i < out.numel(); ++i) p[i] = std::abs(p[i]);
  return out;
}

// The bound on an fp32 sum of `length` products summed in any order, with or
// without FMA: about length·eps·Σ|a·b| (the classic bound for a dot product;
// eps = 2^-23 ≈ 1.2e-7), given Σ|a·b| as `abs_sums`.
Tensor scaled(Tensor abs_sums, double length) {
  double* p = abs_sums.data<double>();
  for (int64_t i = 0; i < abs_sums.numel(); ++i) p[i] = length * 1.2e-7 * p[i] + 1e-30;
  return abs_sums;
}

// Each output is an fp32 sum of C·R·S products (fewer where taps fall in the
// padding, which only shrinks the error). Direct loops, im2col + GEMM and
// implicit GEMM all order it differently; the bound holds for each: matmul's
// with K = C·R·S. Σ|x·w| is the convolution of |x| with |w|.
std::vector<Tensor> tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  return {scaled(cpu::conv2d(absolute(in[0]), absolute(in[1]), Tensor{}, params(s)), double(s[1] * s[5] * s[6]))};
}

// Small but awkward: the emulator runs a fiber per thread, and every kernel
// runs at every size twice (plain and traced). Odd batches, C = 3 (an RGB
// input), K = 5, H and W of 7 and 13 (no tile multiple), 3x3, 5x5 and
// non-square 3x5 filters, stride 2, padding 1 and 2, dilation 2 (alone and
// with stride 2: a halo of (tile-1)·stride + (R-1)·dilation + 1), 1x1 filters
// (a pure GEMM), 1x1 outputs (a 7x7 filter over a 7x7 image, and 1x1x1x1),
// and cases with K or C·R·S past a 64-wide tile (K = 70 and 100, C·R·S up
// to 900). The backward ops use the same sizes.
std::vector<Sizes> conv_test_sizes() {
  return {{1, 1, 1, 1, 1, 1, 1, 1, 0, 1},  {3, 3, 7, 7, 5, 3, 3, 1, 1, 1},   {3, 3, 13, 13, 5, 5, 5, 2, 2, 1},
          {1, 3, 13, 7, 5, 3, 3, 1, 2, 2}, {3, 5, 7, 13, 5, 1, 1, 1, 0, 1},  {3, 3, 13, 13, 5, 1, 1, 2, 0, 1},
          {5, 3, 7, 7, 5, 7, 7, 1, 0, 1},  {1, 3, 9, 11, 5, 3, 5, 2, 1, 1},  {2, 8, 9, 9, 70, 3, 3, 1, 1, 1},
          {3, 3, 13, 13, 5, 3, 3, 2, 2, 2}, {1, 3, 9, 11, 5, 3, 5, 2, 1, 2},
          // C = 12: past dgrad v2's narrow tile for small C (C <= 8), so its wide one runs too.
          {2, 12, 7, 9, 5, 3, 3, 1, 1, 1},
          // C, K >= 16 at 3x3 stride 1: the tables take Winograd (conv v10, v11; dgrad v6, v7 on the
          // forward view, C and K swapped, pad 2 - pad), with the 64-row GEMM tile and, where the
          // view has K = 100 and pad 2, the 128-row one: the forward pass at the second size, dgrad
          // at the third.
          {2, 16, 7, 9, 20, 3, 3, 1, 1, 1}, {1, 17, 6, 5, 100, 3, 3, 1, 2, 1}, {1, 100, 6, 5, 17, 3, 3, 1, 0, 1}};
}

// Issue 5's target layers: ResNet-style 3x3, pad 1, N = 64, C = K from 64 at
// 56x56 down to 256 at 14x14.
std::vector<Sizes> conv_bench_sizes() {
  return {{64, 64, 56, 56, 64, 3, 3, 1, 1, 1},
          {64, 128, 28, 28, 128, 3, 3, 1, 1, 1},
          {64, 256, 14, 14, 256, 3, 3, 1, 1, 1}};
}

const Registration conv2d{Op{
    .name = "conv2d",
    .size_names = {"N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation"},
    .test_sizes = conv_test_sizes(),
    .defaults = {64, 64, 56, 56, 64, 3, 3, 1, 1, 1},
    .make_inputs = inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{y_shape(s)}; },
    .reference = reference,
    .tolerance = tolerance,
    .bench_sizes = conv_bench_sizes(),
    .reduction_length = [](const Sizes& s) { return s[1] * s[5] * s[6]; },
    .cpu_fp32 = [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {cpu::conv2d(in[0], in[1], Tensor{}, params(s))};
    },
    .check_sizes = check_sizes,
}};

// ---- backward ---------------------------------------------------------------
// conv2d_dgrad: dx (N,C,H,W) from dy (N,K,P,Q) and w (K,C,R,S);
// conv2d_wgrad: dw (K,C,R,S) from x (N,C,H,W) and dy (N,K,P,Q). Same sizes as
// the forward. References: cpu::conv2d_backward in double (its x only gives
// dgrad the shape: dx does not depend on x).
Shape dy_shape(const Sizes& s) { return y_shape(s); }

std::vector<Tensor> dgrad_inputs(const Sizes& s, Rng& rng) {
  Tensor dy = uniform(dy_shape(s), rng);
  Tensor w = uniform(w_shape(s), rng);
  return {std::move(dy), std::move(w)};
}
std::vector<Tensor> wgrad_inputs(const Sizes& s, Rng& rng) {
  Tensor x = uniform(x_shape(s), rng);
  Tensor dy = uniform(dy_shape(s), rng);
  return {std::move(x), std::move(dy)};
}

Tensor dgrad_of(const Sizes& s, const Tensor& dy, const Tensor& w) {
  const Tensor x = Tensor::zeros(x_shape(s), DType::f64);
  return cpu::conv2d_backward(x, w, dy, params(s), false, true).dx;
}
Tensor wgrad_of(const Sizes& s, const Tensor& x, const Tensor& dy) {
  const Tensor w = Tensor::zeros(w_shape(s), DType::f64);
  return cpu::conv2d_backward(x, w, dy, params(s), false, false).dw;
}

// The forward's bound: dx[n,c,h,w] sums at most K·R·S products dy·w,
// dw[k,c,r,s] at most N·P·Q products x·dy; the sums of their absolute values
// are the same backward applied to |dy|, |w|, |x|.
int64_t dgrad_length(const Sizes& s) { return s[4] * s[5] * s[6]; }
int64_t wgrad_length(const Sizes& s) {
  const Shape y = y_shape(s);
  return y[0] * y[2] * y[3];
}

const Registration conv2d_dgrad{Op{
    .name = "conv2d_dgrad",
    .size_names = {"N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation"},
    .test_sizes = conv_test_sizes(),
    .defaults = {64, 64, 56, 56, 64, 3, 3, 1, 1, 1},
    .make_inputs = dgrad_inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{x_shape(s)}; },
    .reference = [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {dgrad_of(s, in[0].to(DType::f64), in[1].to(DType::f64))};
    },
    .tolerance = [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {scaled(dgrad_of(s, absolute(in[0]), absolute(in[1])), double(dgrad_length(s)))};
    },
    .bench_sizes = conv_bench_sizes(),
    .reduction_length = dgrad_length,
    .cpu_fp32 = [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {cpu::conv2d_backward(Tensor::zeros(x_shape(s)), in[1], in[0], params(s), false, true).dx};
    },
    .check_sizes = check_sizes,
}};

const Registration conv2d_wgrad{Op{
    .name = "conv2d_wgrad",
    .size_names = {"N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation"},
    .test_sizes = conv_test_sizes(),
    .defaults = {64, 64, 56, 56, 64, 3, 3, 1, 1, 1},
    .make_inputs = wgrad_inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{w_shape(s)}; },
    .reference = [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {wgrad_of(s, in[0].to(DType::f64), in[1].to(DType::f64))};
    },
    .tolerance = [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {scaled(wgrad_of(s, absolute(in[0]), absolute(in[1])), double(wgrad_length(s)))};
    },
    .bench_sizes = conv_bench_sizes(),
    .reduction_length = wgrad_length,
    .cpu_fp32 = [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {cpu::conv2d_backward(in[0], Tensor::zeros(w_shape(s)), in[1], params(s), false, false).dw};
    },
    .check_sizes = check_sizes,
}};

// ---- NHWC ---------------------------------------------------------------------
// conv2d_nhwc: the same convolution with the channels innermost, x (N,H,W,C),
// w (K,R,S,C), y (N,P,Q,K), as cuDNN's NHWC format and PyTorch's channels_last
// store it; the same ten sizes. A layout is part of an op (its buffers have
// one), so this is an op of its own rather than a conv2d kernel that
// transposes (kernels/conv/06_nhwc_vectorized.cu says why). Reference and
// bound: conv2d's, on the tensors permuted to NCHW and the result permuted back.

// (N,H,W,C) -> (N,C,H,W): transpose(1,3) gives (N,C,W,H), transpose(2,3) (N,C,H,W).
// The same moves take w from (K,R,S,C) to (K,C,R,S).
Tensor to_nchw(const Tensor& t) { return t.transpose(1, 3).transpose(2, 3).contiguous(); }
// (N,C,H,W) -> (N,H,W,C): transpose(1,3) gives (N,W,H,C), transpose(1,2) (N,H,W,C).
Tensor to_nhwc(const Tensor& t) { return t.transpose(1, 3).transpose(1, 2).contiguous(); }

std::vector<Tensor> nhwc_inputs(const Sizes& s, Rng& rng) {
  Tensor x = uniform({s[0], s[2], s[3], s[1]}, rng);
  Tensor w = uniform({s[4], s[5], s[6], s[1]}, rng);
  return {std::move(x), std::move(w)};
}

// conv2d's sizes exercise the scalar fallback (C = 1, 3, 5, 17) and the
// float4 taps (C = 8, 12, 16, 100; float4 stores of y only with K = 20).
// These add C and K multiples of 4 (float4 taps and float4 stores of y),
// C·R·S = 36 (a 4-tap tail after the last 8-tap step), stride 2 with
// dilation 2, K past the 64-wide tile, a 1x1 filter, and the shapes of v13's
// TMA path and of the fallbacks past it.
std::vector<Sizes> nhwc_test_sizes() {
  std::vector<Sizes> sizes = conv_test_sizes();
  for (Sizes s : std::vector<Sizes>{{3, 4, 7, 7, 8, 3, 3, 1, 1, 1},
                                    {2, 12, 9, 11, 20, 3, 3, 2, 1, 2},
                                    {1, 16, 7, 9, 68, 3, 3, 1, 1, 1},
                                    {2, 8, 5, 5, 12, 1, 1, 1, 0, 1},
                                    // For v13's TMA boxes (C a multiple of 8): two 64-channel
                                    // steps a tap, the second partial, two 256-wide tiles of K,
                                    // stride 2 with dilation 2; and Q past one 128-pixel box.
                                    {2, 72, 9, 11, 264, 3, 3, 2, 1, 2},
                                    {1, 8, 5, 131, 16, 3, 3, 1, 1, 1},
                                    // R != S at stride 2: v14's and v15's im2col boxes have
                                    // corners that differ along H and W (-2 and -4), so
                                    // the order they are passed in is checked.
                                    {1, 8, 9, 11, 16, 3, 5, 2, 1, 1},
                                    // Past what TMA takes, C a multiple of 8 all the same, so
                                    // the versions' own fallbacks run: a tap offset of 140
                                    // (v14 and v15 keep offsets in [-128, 127]: the direct
                                    // kernel; v13 boxes it), the largest they take (126), and
                                    // stride 9 (past TMA's element strides: all three direct).
                                    {1, 8, 141, 3, 8, 3, 1, 1, 0, 70},
                                    {1, 8, 141, 3, 8, 3, 1, 1, 0, 63},
                                    {1, 8, 20, 20, 8, 3, 3, 9, 1, 1}})
    sizes.push_back(s);
  return sizes;
}

const Registration conv2d_nhwc{Op{
    .name = "conv2d_nhwc",
    .size_names = {"N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation"},
    .test_sizes = nhwc_test_sizes(),
    .defaults = {64, 64, 56, 56, 64, 3, 3, 1, 1, 1},
    .make_inputs = nhwc_inputs,
    .output_shapes = [](const Sizes& s) {
      const Shape y = y_shape(s);
      return std::vector<Shape>{Shape{y[0], y[2], y[3], y[1]}};
    },
    .reference = [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {to_nhwc(cpu::conv2d(to_nchw(in[0]).to(DType::f64), to_nchw(in[1]).to(DType::f64), Tensor{}, params(s)))};
    },
    // conv2d's bound (C·R·S products per output), permuted like the output.
    .tolerance = [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      const Tensor abs_sums = cpu::conv2d(absolute(to_nchw(in[0])), absolute(to_nchw(in[1])), Tensor{}, params(s));
      return {to_nhwc(scaled(abs_sums, double(s[1] * s[5] * s[6])))};
    },
    .bench_sizes = conv_bench_sizes(),
    .reduction_length = [](const Sizes& s) { return s[1] * s[5] * s[6]; },
    // warpnet's CPU convolution is NCHW: the permutations are part of its time.
    .cpu_fp32 = [](const Sizes& s, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {to_nhwc(cpu::conv2d(to_nchw(in[0]), to_nchw(in[1]), Tensor{}, params(s)))};
    },
    .check_sizes = check_sizes,
}};

}  // namespace
}  // namespace warpnet::device
