// The softmax op: probabilities P (N,C) from logits Z (N,C), row by row,
// P[i,j] = exp(Z[i,j] - m_i) / Σ_k exp(Z[i,k] - m_i) with m_i = max_k Z[i,k].
// Every kernel version subtracts the row maximum (the inputs below overflow
// fp32 otherwise); the versions differ in passes and memory traffic.
//
// Why no "softmax_ce" (the fused softmax + cross-entropy forward and backward)
// here: it has two outputs, the loss per row (N) and dlogits (N,C), where an
// Op has one; and an int32 label vector among its inputs, where the registry
// uploads fp32 tensors only (device_bytes). Packing the loss as an extra
// column or labels as floats would make every check and trace speak of a
// shape the op does not have. The registry needs multiple outputs and typed
// inputs first.
#include <algorithm>
#include <cmath>

#include "cpu/ops.hpp"
#include "device/registry.hpp"

namespace warpnet::device {
namespace {

// Logits that overflow without the max subtraction: row i is shifted by +100,
// -100 or 0 (i % 3) on top of a uniform spread in [-10, 10]. exp(110) is
// past fp32's 3.4e38 (exp(88.7)) and exp(-110) below its smallest denormal,
// so a version that skips the max would return inf/inf or 0/0 on rows 0 and 1.
// Row 0 gets the +100 shift, so even N=1 tests the overflow.
std::vector<Tensor> inputs(const Sizes& s, Rng& rng) {
  const int64_t N = s[0], C = s[1];
  Tensor z = Tensor::empty({N, C});
  fill_uniform(z, rng, -10.0, 10.0);
  float* p = z.data<float>();
  constexpr float kShift[3] = {100.0f, -100.0f, 0.0f};
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < C; ++j) p[i * C + j] += kShift[i % 3];
  return {std::move(z)};
}

// In double, from the same fp32 logits the kernels read.
Tensor probabilities(const std::vector<Tensor>& in) { return cpu::softmax(in[0].to(DType::f64)); }

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
// sum, which for the largest term is ~1 — far above the bound at every test C.
// An absolute 1e-37 floor covers probabilities in the denormal range.
std::vector<Tensor> tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  const int64_t N = s[0], C = s[1];
  Tensor p = probabilities(in);
  const float* z = in[0].data<float>();
  double* b = p.data<double>();
  const double u = std::ldexp(1.0, -24);
  for (int64_t i = 0; i < N; ++i) {
    const auto [lo, hi] = std::minmax_element(z + i * C, z + (i + 1) * C);
    const double R = double(*hi) - double(*lo);
    for (int64_t j = 0; j < C; ++j) b[i * C + j] = (8.0 * double(C) + 4.0 * R + 32.0) * u * b[i * C + j] + 1e-37;
  }
  return {p};
}

const Registration softmax{Op{
    .name = "softmax",
    .size_names = {"N", "C"},
    // C: 1 (a row of one), 7, 31 and 33 around a warp, 100, 1000 and 1031
    // (not a multiple of 4, so the float4 version takes its scalar path, and
    // past a 256-thread block's first sweep). N: 1, 3 (one row per shift), 17.
    .test_sizes = {{1, 1},   {3, 1},   {17, 1},  {1, 7},    {17, 7},    {3, 31},   {17, 31}, {3, 33},
                   {17, 33}, {1, 100}, {17, 100}, {3, 1000}, {17, 1000}, {1, 1031}, {17, 1031}},
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
}};

}  // namespace
}  // namespace warpnet::device
