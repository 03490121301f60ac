// The softmax op: probabilities P (N,C) from logits Z (N,C), row by row,
// P[i,j] = exp(Z[i,j] - m_i) / Σ_k exp(Z[i,k] - m_i) with m_i = max_k Z[i,k].
// Every kernel version subtracts the row maximum (the inputs below overflow
// fp32 otherwise); the versions differ in passes and memory traffic.
//
// The fused softmax + cross-entropy ops live here too (below): the forward
// softmax_cross_entropy, logits Z (N,C) f32 and labels (N) i32 → the loss of
// each row (N) and P (N,C), and its backward, P, labels and the upstream
// gradient dloss (1) → dZ (N,C). They waited for the registry to take several
// outputs and i32 inputs: packing the loss as an extra column or the labels
// as floats would have made every check and trace speak of a shape the op
// does not have.
#include <algorithm>
#include <cmath>

#include "cpu/ops.hpp"
#include "device/ops/shifted_rows.hpp"
#include "device/registry.hpp"

namespace warpnet::device {
namespace {

// Logits that overflow without the max subtraction: row i is shifted by +100,
// -100 or 0 (i % 3) on top of a uniform spread in [-10, 10]. exp(110) is
// past fp32's 3.4e38 (exp(88.7)) and exp(-110) below its smallest denormal,
// so a version that skips the max would return inf/inf or 0/0 on rows 0 and 1.
// Row 0 gets the +100 shift, so even N=1 tests the overflow.
//
// Long rows hide a lost term under the bound (tolerance, below): with the
// logits spread over 20, a term's share of the row sum is 1/C on average and
// about 20/C for the largest, while the bound grows as 8C·u. At C = 1031
// (bound 5.0e-4) a lost term of above-average size shows; at 4096 (2.0e-3)
// only the largest few; at 32768 (1.6e-2) none. So from kLongRow on, each row
// gets one logit 8 above its maximum, which then holds more than half the
// row's sum (e^8 against the others' C/20 at a spread of 20: 0.65 of it at
// C = 32769): a version that drops it errs by more than 100% where the
// bound allows 1.6%. It sits where a size off a tile multiple ends, the
// row's last element, in row 0; at its first in row 1; anywhere in the rest.
// The planted term guards the ends, not the middle: a lost block of
// ordinary terms (one warp's share) would still hide. So row 2 of a long
// row's test is constant: each exp(0) is exactly 1, the sum C is exact in
// any order and only P = 1/C rounds, and tolerance() allows that row 8u;
// dropping m terms errs by m/C (32 of 4096: 0.8%).
// Shorter rows keep the plain spread, where above-average terms show.
constexpr int64_t kLongRow = 2048;
constexpr int64_t kConstantRow = 2;

std::vector<Tensor> inputs(const Sizes& s, Rng& rng) {
  const int64_t N = s[0], C = s[1];
  Tensor z = shifted_rows(N, C, 10.0, rng);
  if (C < kLongRow) return {std::move(z)};
  float* pz = z.data<float>();
  for (int64_t i = 0; i < N; ++i) {
    float* row = pz + i * C;
    if (i == kConstantRow) {
      std::fill(row, row + C, 1.5f);
      continue;
    }
    const int64_t at = i == 0 ? C - 1 : i == 1 ? 0 : int64_t(rng.below(uint64_t(C)));
    row[at] = *std::max_element(row, row + C) + 8.0f;
  }
  return {std::move(z)};
}

// In double, from the same fp32 logits the kernels read.
Tensor probabilities(const std::vector<Tensor>& in) { return cpu::softmax(in[0].to(DType::f64)); }

// R, the range max - min of row i of z (N,C), which the bounds below grow with.
double row_range(const float* z, int64_t i, int64_t C) {
  const auto [lo, hi] = std::minmax_element(z + i * C, z + (i + 1) * C);
  return double(*hi) - double(*lo);
}

// Whether row i is one of inputs()' constant rows, whose sums are exact.
bool constant_row(const float* z, int64_t i, int64_t C) { return C >= kLongRow && row_range(z, i, C) == 0; }

// The error of an fp32 softmax, relative to P[i,j], in units of u = 2^-24:
//  - d = Z[i,j] - m rounded to fp32 errs by |d|·u, which exp turns into a
//    relative |d|·u: at most R·u, R = the row's range max - min.
//  - expf: at most 2 ulp = 4u (CUDA's documented bound; glibc's is below 1).
//  - the sum of C positive terms, in any order: C·u, plus each term's own
//    (R + 4)·u. The online versions (04, 05) also rescale the running sum by
//    exp(m_old - m_new) each time the maximum grows, at most C times: each
//    rescale costs 4u (expf) + u (the product), and the argument errors
//    |m_old - m_new|·u telescope to at most R·u along one chain; merging
//    partial (m, s) pairs across lanes is more of the same, at most C merges.
//  - the final 1/s and the product: 2u.
// Together well under (6C + 3R + 16)·u; we allow (8C + 4R + 32)·u. A version
// that drops or doubles one term errs by about that term's share of the row
// sum, above the bound for terms of above-average size up to C = 1031, the
// longest plain rows tested; in longer rows inputs() plants one term with
// over half the sum.
// An absolute 1e-37 floor covers probabilities in the denormal range.
std::vector<Tensor> tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  const int64_t N = s[0], C = s[1];
  Tensor p = probabilities(in);
  const float* z = in[0].data<float>();
  double* b = p.data<double>();
  const double u = std::ldexp(1.0, -24);
  for (int64_t i = 0; i < N; ++i) {
    // A constant row (inputs(): long rows' row 2): exact terms and sum, so
    // only P's division (or reciprocal and product) rounds: within 2 ulp
    // each even for CUDA's fast division, 8u in all.
    const double factor = constant_row(z, i, C) ? 8.0 : 8.0 * double(C) + 4.0 * row_range(z, i, C) + 32.0;
    for (int64_t j = 0; j < C; ++j) b[i * C + j] = factor * u * b[i * C + j] + 1e-37;
  }
  return {p};
}

// C: 1 (a row of one), 7, 31 and 33 around a warp, 100, 1000 and 1031
// (not a multiple of 4, so the float4 version takes its scalar path, and
// past a 256-thread block's first sweep). N: 1, 3 (one row per shift), 17;
// and 129 and 263, past the 128 rows a one-thread-per-row version puts in a
// block: a second and a third block, the last one partial.
const std::vector<Sizes> kSoftmaxTestSizes = {{1, 1},    {3, 1},    {17, 1},   {1, 7},     {17, 7},
                                              {3, 31},   {17, 31},  {3, 33},   {17, 33},   {1, 100},
                                              {17, 100}, {3, 1000}, {17, 1000}, {1, 1031}, {17, 1031},
                                              {129, 7},  {263, 33}};

// The fused ops' sizes: the shared ones, and rows past 1024 and 2048 columns,
// where a version that keeps a row in a warp's or a block's registers, or
// packs rows into a warp, changes path (softmax v5 and v6 do; today's fused
// versions, a thread or a warp per row, walk any length alike). 2047: lane
// 31 of a warp per row walks 63 columns, the others 64; the plain spread,
// just under kLongRow. 2048: 64 each, with inputs()' planted terms and the
// constant row 2. 4099: past 4096, lanes 0-2 take one more. N = 9: a
// far-label row (6, ce_inputs) besides the constant row, and a second,
// partial block (one row of 8) for a warp-per-row version.
std::vector<Sizes> ce_test_sizes() {
  std::vector<Sizes> sizes = kSoftmaxTestSizes;
  sizes.insert(sizes.end(), {{9, 2047}, {9, 2048}, {9, 4099}});
  return sizes;
}

const Registration softmax{Op{
    .name = "softmax",
    .size_names = {"N", "C"},
    // The shared sizes, and rows longer than a warp's registers hold, for
    // v6 (kernels/softmax/06_row_in_registers.cu): 4096 (a block of 128
    // threads, four warps, float4s), 32768 (its largest, 1024 threads x 8
    // float4s) and 32769 (past it: v5's kernel runs, on 4-byte accesses).
    .test_sizes = [] {
      std::vector<Sizes> sizes = kSoftmaxTestSizes;
      sizes.insert(sizes.end(), {{3, 4096}, {3, 32768}, {3, 32769}});
      return sizes;
    }(),
    .defaults = {4096, 1024},
    .make_inputs = inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{Shape{s[0], s[1]}}; },
    .reference = [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {probabilities(in)}; },
    .tolerance = tolerance,
    // Memory-bound shapes: many short rows (a classifier or attention over
    // 1024 keys, 256 MiB in) and fewer long ones (a vocabulary, 1 GiB in).
    .bench_sizes = {{65536, 1024}, {8192, 32768}},
    // Each probability divides by a sum of C terms.
    .reduction_length = [](const Sizes& s) { return s[1]; },
    .cpu_fp32 = [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> { return {cpu::softmax(in[0])}; },
    .check_sizes = every_size_at_least_1,
}};


// ---- softmax_cross_entropy -------------------------------------------------------
// Z (N,C) f32, labels (N) i32 in [0,C) → loss (N), each row's −log softmax(z)[label]
// = logsumexp(z) − z[label], and P (N,C). The batch mean is the caller's (a
// sum of N values), so the op stays a pure row kernel.

// A label per row, uniform in [0, C), from the rng: i32 (N).
Tensor random_labels(const Sizes& s, Rng& rng) {
  Tensor labels = Tensor::empty({s[0]}, DType::i32);
  int32_t* p = labels.data<int32_t>();
  for (int64_t i = 0; i < s[0]; ++i) p[i] = int32_t(rng.below(uint64_t(s[1])));
  return labels;
}

// The softmax op's logits (row shifts of +100, -100, 0: the overflow test),
// a label per row from the rng, and in rows 2, 6, 10, ... (i % 4 == 2) the
// label's logit moved 150 below where it was: its probability, about
// e^-150, underflows fp32 (whose smallest denormal is e^-103) to 0. A kernel
// that took −log of the rounded probability would write inf there; the
// stable (m − z[label]) + log s gives the true ~150. Long rows keep row 2
// constant (inputs()), for its exact loss log C (ce_tolerance): there the
// far labels start at row 6.
std::vector<Tensor> ce_inputs(const Sizes& s, Rng& rng) {
  const int64_t N = s[0], C = s[1];
  Tensor z = inputs(s, rng)[0], labels = random_labels(s, rng);
  float* pz = z.data<float>();
  const int32_t* pl = labels.data<int32_t>();
  const int64_t first = C >= kLongRow ? kConstantRow + 4 : 2;
  for (int64_t i = first; i < N; i += 4) pz[i * C + pl[i]] -= 150.0f;
  return {std::move(z), std::move(labels)};
}

// In double from the CPU's own fused op, cpu::softmax_cross_entropy: its
// row_loss (each row's log Σ exp(z − m) + m − z[label]; the op's `loss` is
// their mean) and its probabilities (the cpu::softmax the softmax op is
// checked against).
std::vector<Tensor> ce_reference(const Sizes&, const std::vector<Tensor>& in) {
  cpu::SoftmaxCrossEntropy out = cpu::softmax_cross_entropy(in[0].to(DType::f64), in[1]);
  return {std::move(out.row_loss), std::move(out.probs)};
}

// P: the softmax op's bound (tolerance above), for the same passes. The
// loss, computed as (m − z[label]) + log s with s = Σ exp(z − m) in [1, C],
// in units of u:
//  - s: relative error at most (6C + 2R + 4)·u (the softmax derivation above
//    without the final 1/s and product: each term's R + 4, the C − 1 adds,
//    and for the online version the rescales' 5C + R), which log turns into
//    the same absolute error;
//  - logf: at most 1 ulp (CUDA's documented bound; glibc's is below), <= 2u·log C;
//  - m − z[label]: one rounding, at most R·u (exact when both lie within a
//    factor of 2 of each other, as in most of the ±100-shifted rows);
//  - the final add: u·|loss|.
// (6C + 3R + 4 + 2·log C)·u lies under the softmax allowance (8C + 4R + 32)·u,
// to which we add 2u·|loss| (twice the last rounding). −log of a rounded
// probability is inf in the far-label rows (ce_inputs), far outside.
// A long row's constant row: every exp(0) is 1 and s = C exactly, m − z[label]
// = 0, so only logf rounds: 1 ulp of log C, at most 2u·|loss|; we allow
// 4u·|loss|. A version that loses m of the C terms errs by log(C / (C − m)),
// about m/C: 1/4099 = 2.4e-4 against 2.0e-6 at C = 4099.
std::vector<Tensor> ce_tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  const int64_t N = s[0], C = s[1];
  std::vector<Tensor> bounds = {ce_reference(s, in)[0], tolerance(s, in)[0]};
  const float* z = in[0].data<float>();
  double* b = bounds[0].data<double>();
  const double u = std::ldexp(1.0, -24);
  for (int64_t i = 0; i < N; ++i)
    b[i] = constant_row(z, i, C) ? 4.0 * u * std::abs(b[i])
                                 : (8.0 * double(C) + 4.0 * row_range(z, i, C) + 32.0 + 2.0 * std::abs(b[i])) * u;
  return bounds;
}

const Registration softmax_cross_entropy{Op{
    .name = "softmax_cross_entropy",
    .size_names = {"N", "C"},
    // The shared sizes and long rows (ce_test_sizes); C = 1 is a row whose loss is 0 exactly.
    .test_sizes = ce_test_sizes(),
    .defaults = {4096, 1024},
    .make_inputs = ce_inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{Shape{s[0]}, Shape{s[0], s[1]}}; },
    .reference = ce_reference,
    .tolerance = ce_tolerance,
    // A classifier's batch (1000 classes) and a language model's (a 32k vocabulary).
    .bench_sizes = {{65536, 1000}, {8192, 32768}},
    // Each loss and probability rests on a sum of C terms.
    .reduction_length = [](const Sizes& s) { return s[1]; },
    .cpu_fp32 = [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      cpu::SoftmaxCrossEntropy out = cpu::softmax_cross_entropy(in[0], in[1]);
      return {std::move(out.row_loss), std::move(out.probs)};
    },
    .check_sizes = every_size_at_least_1,
}};

// ---- softmax_cross_entropy_backward -------------------------------------------
// P (N,C) f32, labels (N) i32, dloss (1) f32 → dZ (N,C) = dloss·(P − onehot(label))/N,
// the gradient of the batch-mean loss (cpu::softmax_cross_entropy_backward).

// P: the fp32 softmax (cpu::softmax) of the softmax op's logits, so rows sum
// to 1 as the forward leaves them; labels from the rng; dloss in [0.25, 4]
// (1 for a plain loss; other values under loss scaling).
std::vector<Tensor> ce_backward_inputs(const Sizes& s, Rng& rng) {
  Tensor p = cpu::softmax(inputs(s, rng)[0]);
  Tensor labels = random_labels(s, rng);
  return {std::move(p), std::move(labels), Tensor::from<float>({1}, {float(rng.uniform(0.25, 4.0))})};
}

std::vector<Tensor> ce_backward_reference(const Sizes&, const std::vector<Tensor>& in) {
  return {cpu::softmax_cross_entropy_backward(in[0].to(DType::f64), in[1], in[2].item(0))};
}

// The kernel computes (dloss / N)·(P − onehot) in fp32: the scale rounds once
// (N converts exactly below 2^24), P − 1 once (exactly when P >= 1/2), the
// product once: |ΔdZ| <= 3u·|dZ|, relative, no cancellation left (the
// scale·P − scale form would err by u·scale where P ≈ 1). We allow 6u·|dZ|,
// and 1e-37 absolute for products in fp32's denormal range. A wrong label
// column, a missing 1/N or a sign flip is wrong by the whole value.
std::vector<Tensor> ce_backward_tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  Tensor tol = ce_backward_reference(s, in)[0];
  double* b = tol.data<double>();
  const double u = std::ldexp(1.0, -24);
  for (int64_t i = 0; i < tol.numel(); ++i) b[i] = 6.0 * u * std::abs(b[i]) + 1e-37;
  return {std::move(tol)};
}

const Registration softmax_cross_entropy_backward{Op{
    .name = "softmax_cross_entropy_backward",
    .size_names = {"N", "C"},
    // The forward's sizes, and 263 x 1031 = 271153 elements: past the grid
    // cap (1056 blocks of 256 = 270336 threads), so the grid-stride loop
    // comes round.
    .test_sizes = [] {
      std::vector<Sizes> sizes = ce_test_sizes();
      sizes.push_back({263, 1031});
      return sizes;
    }(),
    .defaults = {4096, 1024},
    .make_inputs = ce_backward_inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{Shape{s[0], s[1]}}; },
    .reference = ce_backward_reference,
    .tolerance = ce_backward_tolerance,
    .bench_sizes = {{65536, 1000}, {8192, 32768}},
    // No sums: each element comes from one probability.
    .reduction_length = [](const Sizes&) { return int64_t(1); },
    .cpu_fp32 = [](const Sizes&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
      return {cpu::softmax_cross_entropy_backward(in[0], in[1], in[2].item(0))};
    },
    .check_sizes = every_size_at_least_1,
}};

}  // namespace
}  // namespace warpnet::device
