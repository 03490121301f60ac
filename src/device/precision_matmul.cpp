// precision_matmul.hpp, the measuring half: the formats, the inputs stored in
// each, and the errors against float64. The rows (who multiplies, timed how)
// are precision_rows.cpp.
#include "device/precision_matmul.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include "core/error.hpp"
#include "cpu/ops.hpp"
#include "numeric/scaling.hpp"

namespace warpnet::device::precision {

namespace {

struct Entry {
  const char* name;
  const numeric::Format* format;
};
// Table order: fp32, then the 19-bit and 16-bit formats, then fp8 and fp4.
constexpr Entry kEntries[] = {{"fp32", &numeric::kFp32}, {"tf32", &numeric::kTf32}, {"bf16", &numeric::kBf16},
                              {"fp16", &numeric::kFp16}, {"e4m3", &numeric::kE4M3}, {"e5m2", &numeric::kE5M2},
                              {"e2m1", &numeric::kE2M1}};

// Each element rounded to nearest even in `f` (no scale).
Tensor rounded(const Tensor& x, const numeric::Format& f) {
  Tensor out = Tensor::empty(x.shape());
  const float* src = x.data<float>();
  float* dst = out.data<float>();
  const int64_t n = x.numel();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) dst[i] = numeric::quantize(f, src[i]);
  return out;
}

// Per-tensor scaled: the values the codes hold (x·scale rounded), and the scale.
Tensor per_tensor(const Tensor& x, const numeric::Format& f, float& scale) {
  const numeric::PerTensor t = numeric::encode_per_tensor(f, std::span<const float>(x.data<float>(), size_t(x.numel())));
  scale = t.scale;
  Tensor out = Tensor::empty(x.shape());
  float* dst = out.data<float>();
  for (size_t i = 0; i < t.codes.size(); ++i) dst[i] = numeric::decode(f, t.codes[i]);
  return out;
}

// MX along the last dimension of a (rows, cols) matrix: the decoded values
// (element times its block's power-of-two scale, exact in fp32).
Tensor mx_rows(const Tensor& x, const numeric::Format& f) {
  const numeric::MxTensor t = numeric::encode_mx(f, std::span<const float>(x.data<float>(), size_t(x.numel())), x.dim(1));
  const std::vector<float> values = numeric::decode(t);
  Tensor out = Tensor::empty(x.shape());
  std::copy(values.begin(), values.end(), out.data<float>());
  return out;
}

Tensor transposed(const Tensor& x) {  // (r,c) -> (c,r)
  const int64_t r = x.dim(0), c = x.dim(1);
  Tensor out = Tensor::empty({c, r});
  const float* src = x.data<float>();
  float* dst = out.data<float>();
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) dst[j * r + i] = src[i * c + j];
  return out;
}

Tensor absolute_f64(const Tensor& x) {
  Tensor out = x.to(DType::f64);
  double* p = out.data<double>();
  for (int64_t i = 0; i < out.numel(); ++i) p[i] = std::fabs(p[i]);
  return out;
}

}  // namespace

const std::vector<std::string>& all_precisions() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Entry& e : kEntries) v.push_back(e.name);
    return v;
  }();
  return names;
}

const numeric::Format& format_of(const std::string& precision) {
  for (const Entry& e : kEntries)
    if (precision == e.name) return *e.format;
  std::string known;
  for (const Entry& e : kEntries) known += cat(known.empty() ? "" : ", ", e.name);
  fail("precision: unknown precision '", precision, "' (known: ", known, ")");
}

Operands make_operands(int64_t M, int64_t N, int64_t K, uint64_t seed, bool trans_b) {
  WN_CHECK(M > 0 && N > 0 && K > 0, "precision: sizes must be positive, got M=", M, " N=", N, " K=", K);
  Rng rng(seed);
  const Sizes sizes = {M, N, K, 0, trans_b ? 1 : 0};
  std::vector<Tensor> in = op("matmul").make_inputs(sizes, rng);
  Operands x{M, N, K, trans_b, in.at(0), in.at(1), {}, {}};
  x.c_ref = cpu::matmul(x.a.to(DType::f64), x.b.to(DType::f64), false, trans_b);
  x.abs_products = cpu::matmul(absolute_f64(x.a), absolute_f64(x.b), false, trans_b);
  return x;
}

Quantized quantize(const std::string& precision, const Operands& x) {
  const numeric::Format& f = format_of(precision);
  Quantized q;
  q.precision = precision;
  q.scaling = "none";
  const int64_t elements = x.M * x.K + x.K * x.N;
  if (&f == &numeric::kFp32) {
    q.a = x.a, q.b = x.b;  // the originals: nothing to round
    q.input_bytes = 4 * elements;
  } else if (&f == &numeric::kTf32 || &f == &numeric::kBf16 || &f == &numeric::kFp16) {
    q.a = rounded(x.a, f), q.b = rounded(x.b, f);
    q.input_bytes = (&f == &numeric::kTf32 ? 4 : 2) * elements;
  } else if (&f == &numeric::kE4M3 || &f == &numeric::kE5M2) {
    q.scaling = "per-tensor";
    q.a = per_tensor(x.a, f, q.scale_a), q.b = per_tensor(x.b, f, q.scale_b);
    q.input_bytes = elements + 2 * 4;
  } else {  // e2m1: MX blocks along K, so B (K,N) is blocked along its columns, B (N,K) along its rows
    q.scaling = "mx32 (e8m0 per 32 along K)";
    q.a = mx_rows(x.a, f);
    q.b = x.trans_b ? mx_rows(x.b, f) : transposed(mx_rows(transposed(x.b), f));
    const int64_t blocks = (x.K + numeric::kMxBlock - 1) / numeric::kMxBlock;
    q.input_bytes = (x.M * x.K + 1) / 2 + (x.K * x.N + 1) / 2 + (x.M + x.N) * blocks;
  }
  return q;
}

Errors measure(const Tensor& c, const Quantized& q, const Operands& x) {
  WN_CHECK(c.numel() == x.M * x.N, "precision: C has ", c.numel(), " elements, expected ", x.M, "x", x.N);
  const Tensor got = c.to(DType::f64);
  const double* pc = got.data<double>();
  const double *ref = x.c_ref.data<double>(), *scale = x.abs_products.data<double>();
  const double divisor = double(q.scale_a) * double(q.scale_b);
  const double eps = numeric::epsilon(format_of(q.precision));
  double diff2 = 0, ref2 = 0, worst = 0;
  bool finite = true;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double v = pc[i] / divisor;
    finite = finite && std::isfinite(v);
    const double d = std::fabs(v - ref[i]);
    diff2 += d * d;
    ref2 += ref[i] * ref[i];
    if (scale[i] > 0) worst = std::max(worst, d / (eps * scale[i]));
    else if (d > 0) worst = INFINITY;  // every product is zero, so any error is infinitely many units
  }
  if (!finite) return {NAN, NAN};
  return {std::sqrt(diff2 / std::max(ref2, 1e-300)), worst};
}

ProductCheck check_product(const Tensor& c, const Quantized& q, const Operands& x, double widening) {
  WN_CHECK(c.numel() == x.M * x.N, "precision: C has ", c.numel(), " elements, expected ", x.M, "x", x.N);
  const Tensor got = c.contiguous(), a = q.a.contiguous(), b = q.b.contiguous();
  const float *pc = got.data<float>(), *pa = a.data<float>(), *pb = b.data<float>();
  // γ = nu/(1-nu), nu = (K+1)·u for a unit roundoff u: 2^-23, twice
  // round-to-nearest's, as tensor cores may truncate their adds; widened
  // for a narrow accumulator. From nu = 1 no bound exists: nothing to check.
  const double nu = widening * double(x.K + 1) * std::ldexp(1.0, -23);
  ProductCheck out;
  if (nu >= 1) {
    out.unchecked = true;
    return out;
  }
  const double gamma = nu / (1 - nu);
  const int64_t n = x.M * x.N, samples = std::min<int64_t>(n, 4096);
  auto check = [&](int64_t e) {
    const int64_t i = e / x.N, j = e % x.N;
    double exact = 0, magnitude = 0;
    for (int64_t k = 0; k < x.K; ++k) {
      const double t = double(pa[i * x.K + k]) * double(x.trans_b ? pb[j * x.K + k] : pb[k * x.N + j]);
      exact += t;
      magnitude += std::fabs(t);
    }
    // The sum's bound, and the rounding of the result to fp32.
    const double bound = gamma * magnitude + std::ldexp(std::fabs(exact), -24);
    ++out.checked;
    if (std::fabs(double(pc[e]) - exact) <= bound) return;  // NaN fails here too
    if (++out.wrong == 1) out.first = cat("C[", i, ",", j, "] = ", pc[e], ", want ", exact, " (bound ", bound, ")");
  };
  for (int64_t t = 0; t < samples; ++t) check(t * n / samples);
  if (samples < n) check(n - 1);  // the last element: the edge tiles' corner
  return out;
}

namespace {
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
}  // namespace

nlohmann::json to_json(const Row& r) {
  return {{"precision", r.precision},
          {"scaling", r.scaling},
          {"backend", r.backend},
          {"kernel", r.kernel},
          {"M", r.M},
          {"N", r.N},
          {"K", r.K},
          {"ms", number(r.ms)},
          {"tflops", number(r.tflops)},
          {"rel_frobenius", number(r.rel_frobenius)},
          {"max_ulps", number(r.max_ulps)},
          {"input_bytes", r.input_bytes},
          {"ok", r.ok},
          {"note", r.note}};
}

nlohmann::json ratios(const std::vector<Row>& rows) {
  auto best = [&](const std::string& precision) -> const Row* {
    const Row* b = nullptr;
    for (const Row& r : rows)
      if (r.backend == "cuda" && r.ok && r.precision == precision && std::isfinite(r.tflops) && (!b || r.tflops > b->tflops))
        b = &r;
    return b;
  };
  auto ratio = [&](const char* top, const char* bottom) -> nlohmann::json {
    const Row *t = best(top), *b = best(bottom);
    if (!t || !b) return nullptr;
    return {{"ratio", t->tflops / b->tflops}, {"kernels", {t->kernel, b->kernel}}, {"tflops", {t->tflops, b->tflops}}};
  };
  return {{"fp8_over_bf16", ratio("e4m3", "bf16")}, {"bf16_over_fp32", ratio("bf16", "fp32")}};
}

}  // namespace warpnet::device::precision
