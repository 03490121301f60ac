// device/precision_matmul.hpp on the CPU: the error of each stored format
// against float64 follows the format's mantissa bits, fp32 costs only the
// summation, the AVX512_BF16 path agrees with Eigen on the same bf16 values,
// the record's rows carry every field, and bad options are refused by name.
// Sizes are small and off every tile and vector width (64x48x40, 37x29x77).
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "core/rounding.hpp"
#include "cpu/matmul_bf16.hpp"
#include "cpu/ops.hpp"
#include "device/precision_matmul.hpp"
#include "tests/test_support.hpp"

namespace precision = warpnet::device::precision;
using warpnet::DType;
using warpnet::Tensor;
using warpnet::gamma_fp32;

namespace {

constexpr uint64_t kSeed = 11;

// sum_k |a_q||b_q| for the stored values (f64, (M,N)): the scale of every
// fp32 summation bound on them.
Tensor stored_abs_products(const precision::Quantized& q) {
  auto abs64 = [](const Tensor& t) {
    Tensor out = t.to(DType::f64);
    for (int64_t i = 0; i < out.numel(); ++i) out.data<double>()[i] = std::fabs(out.data<double>()[i]);
    return out;
  };
  return warpnet::cpu::matmul(abs64(q.a), abs64(q.b));
}

double frobenius(const Tensor& t) {
  const Tensor d = t.to(DType::f64);
  double s = 0;
  for (int64_t i = 0; i < d.numel(); ++i) s += d.data<double>()[i] * d.data<double>()[i];
  return std::sqrt(s);
}

std::map<std::string, precision::Row> cpu_rows(int64_t m, int64_t n, int64_t k) {
  precision::Options o;
  o.cpu_size = {m, n, k};
  o.emu = o.cuda = false;
  o.seed = kSeed;
  o.runs = 2;
  o.budget_s = 0.001;
  std::map<std::string, precision::Row> rows;
  for (const precision::Row& r : precision::run(o))
    if (r.kernel == "cpu") rows[r.precision] = r;
  return rows;
}

}  // namespace

TEST_CASE("the CPU error of each format follows its mantissa bits") {
  const auto rows = cpu_rows(64, 48, 40);
  REQUIRE(rows.size() == precision::all_precisions().size());
  for (const auto& [name, r] : rows) {
    INFO(name, ": ", r.rel_frobenius);
    CHECK(r.ok);
    CHECK(r.ms > 0);
    CHECK(std::isfinite(r.rel_frobenius));
  }
  // With inputs uniform in (-1,1), each value sits uniformly inside its
  // binade's grid, so its rounding error is uniform over +-half a step and
  // the step is 2^-p of the binade: the rms error, and the relative
  // Frobenius error of C built from it, scale exactly as 2^-p. Between two
  // formats the ratio is 2^(p1 - p2), moved only by sampling (3072 outputs of
  // 40 products: a few per cent) and, for the per-tensor scaled fp8, by amax
  // landing on 1.75 x 2^E instead of a power of two (rms up by sqrt(0.1666 /
  // 0.1429) = 1.08, worked out from the binade probabilities). A format that
  // kept one bit more or less would be off by a factor 2; 1.5 either way
  // separates the two.
  auto ratio_is = [&](const char* coarse, const char* fine, double expected) {
    const double ratio = rows.at(coarse).rel_frobenius / rows.at(fine).rel_frobenius;
    INFO(coarse, " / ", fine, " = ", ratio, ", expected about ", expected);
    CHECK(ratio > expected / 1.5);
    CHECK(ratio < expected * 1.5);
  };
  ratio_is("bf16", "tf32", 8);   // 7 vs 10 mantissa bits
  ratio_is("e4m3", "bf16", 16);  // 3 vs 7
  ratio_is("e5m2", "e4m3", 2);   // 2 vs 3
  // fp16 and tf32 both keep 10 bits and round every |x| >= 2^-14 (fp16's
  // smallest normal) to the same value; below it, a fraction 2^-14 of
  // uniform inputs, fp16's subnormals err by at most 2^-25 absolute, far
  // under the 2^-12-sized errors of the rest: the two agree to well within 1 %.
  CHECK(rows.at("fp16").rel_frobenius == doctest::Approx(rows.at("tf32").rel_frobenius).scale(0).epsilon(0.01));
  // e2m1 keeps 1 bit against e5m2's 2, and MX blocks add error on top (small
  // elements of a block fall into e2m1's step-0.5 subnormals, and a block
  // amax in (6, 8) x 2^E clamps to 6): at least the factor 2 less the margin.
  CHECK(rows.at("e2m1").rel_frobenius > rows.at("e5m2").rel_frobenius * 2 / 1.5);
  // fp32 has no input rounding at all, far below tf32's 2^-11-sized one.
  CHECK(rows.at("fp32").rel_frobenius < rows.at("tf32").rel_frobenius / 100);
}

TEST_CASE("fp32 costs only the fp32 summation; 16- and 19-bit formats at most about one unit of max_ulps") {
  const int64_t m = 64, n = 48, k = 40;
  const auto rows = cpu_rows(m, n, k);
  const precision::Operands x = precision::make_operands(m, n, k, kSeed);
  // fp32: the inputs are the originals, so C - Cref is the summation error,
  // |C - Cref| <= gamma_K * sum_k |a||b| element by element; in max_ulps
  // units (2^-23 * sum |a||b|) that is gamma_K / 2^-23, about K/2, and over
  // the Frobenius norm gamma_K * ||S||_F / ||Cref||_F.
  const double gamma = gamma_fp32(double(k));
  CHECK(rows.at("fp32").max_ulps <= gamma / 0x1p-23);
  CHECK(rows.at("fp32").rel_frobenius <= gamma * frobenius(x.abs_products) / frobenius(x.c_ref));
  // tf32 and bf16 (no subnormals in reach of these inputs): each stored value
  // is within a relative u = 2^-p-1, each product within 2u + u^2, so input
  // rounding costs at most (2^-p + 2^-2p-2) * S; the fp32 sums of the stored
  // products add gamma_K * (1 + 2^-p + 2^-2p-2) * S. In units of 2^-p * S:
  for (const char* name : {"tf32", "bf16"}) {
    const double eps = warpnet::numeric::epsilon(precision::format_of(name));
    const double rounding = 1 + eps / 4;
    const double bound = rounding + gamma * (1 + eps + eps * eps / 4) / eps;
    INFO(name, ": max_ulps ", rows.at(name).max_ulps, ", bound ", bound);
    CHECK(rows.at(name).max_ulps <= bound);
  }
}

TEST_CASE("the AVX512_BF16 path equals Eigen on the same bf16 values within the summation-order bound") {
  if (!warpnet::cpu::has_avx512_bf16()) {
    MESSAGE("SKIPPED: this CPU has no AVX512_BF16 (the CPU rows use Eigen for bf16 alone)");
    return;
  }
  // K = 77: two full 32-wide steps and a zero-padded tail; M = 37 and
  // N = 29: edge blocks of 1 row and 1 column.
  const int64_t m = 37, n = 29, k = 77;
  const precision::Operands x = precision::make_operands(m, n, k, kSeed);
  const precision::Quantized q = precision::quantize("bf16", x);
  const Tensor eigen = warpnet::cpu::matmul(q.a, q.b), avx = warpnet::cpu::matmul_bf16(q.a, q.b);
  const Tensor scale = stored_abs_products(q);
  // Both compute the exact products (bf16 x bf16 fits fp32's 24 bits) and
  // differ only in how the fp32 additions are ordered and grouped. Each
  // result is within gamma_h * sum_k |a||b| of the exact sum, h the longest
  // chain of roundings behind it: at most K for Eigen (one FMA per k, plus
  // adding its K-blocks) and 2 ceil(K/32) + 4 for vdpbf16ps (two adds per
  // lane per 32-wide step, then the 16 lanes added pairwise); h = 2K covers
  // both (K = 77: 77 + 3 and 10), so they differ by at most
  // 2 * gamma_2K * sum_k |a||b|.
  const double tol = 2 * gamma_fp32(2.0 * double(k));
  int64_t bad = 0;
  for (int64_t i = 0; i < m * n; ++i) {
    const double d = std::fabs(double(eigen.data<float>()[i]) - double(avx.data<float>()[i]));
    if (d > tol * scale.data<double>()[i]) ++bad;
  }
  CHECK(bad == 0);
  // And they are not trivially equal to nothing: C is the product, to bf16's error.
  const precision::Errors e = precision::measure(avx, q, x);
  CHECK(e.rel_frobenius < 0.01);

  const std::string err = warpnet::test::error_of([&] { warpnet::cpu::matmul_bf16(x.a, x.b); });
  CHECK(err.find("is not a bf16 value") != std::string::npos);
}

TEST_CASE("rows become the record's JSON with every field; ratios need GPU rows") {
  precision::Row r;
  r.precision = "bf16", r.scaling = "none", r.backend = "cpu", r.kernel = "cpu";
  r.M = 2, r.N = 3, r.K = 4, r.ms = 0.5, r.tflops = 1e-7, r.rel_frobenius = 1e-3, r.max_ulps = 0.7, r.input_bytes = 28;
  const nlohmann::json j = precision::to_json(r);
  for (const char* field : {"precision", "backend", "kernel", "M", "N", "K", "ms", "tflops", "rel_frobenius", "max_ulps",
                            "input_bytes", "scaling", "ok", "note"})
    CHECK_MESSAGE(j.contains(field), field);
  CHECK(j["max_ulps"] == 0.7);
  r.ms = NAN;
  CHECK(precision::to_json(r)["ms"].is_null());  // JSON has no NaN

  const nlohmann::json none = precision::ratios({r});
  CHECK(none["fp8_over_bf16"].is_null());
  CHECK(none["bf16_over_fp32"].is_null());
  // The best kernel of each precision on cuda: 300 / 100 and 100 / 20.
  auto cuda = [](const char* p, const char* kernel, double tflops) {
    precision::Row c;
    c.precision = p, c.backend = "cuda", c.kernel = kernel, c.tflops = tflops;
    return c;
  };
  const nlohmann::json some = precision::ratios({cuda("e4m3", "matmul/14_fp8", 300), cuda("bf16", "matmul/12_mma_sync", 100),
                                                 cuda("bf16", "matmul/11_wmma", 50), cuda("fp32", "matmul/00_cublas", 20),
                                                 cuda("fp32", "matmul/01_naive", 2)});
  CHECK(some["fp8_over_bf16"]["ratio"] == doctest::Approx(3.0));
  CHECK(some["fp8_over_bf16"]["kernels"] == nlohmann::json({"matmul/14_fp8", "matmul/12_mma_sync"}));
  CHECK(some["bf16_over_fp32"]["ratio"] == doctest::Approx(5.0));
}

TEST_CASE("an unknown precision or a bad size is refused by name") {
  precision::Options o;
  o.precisions = {"bf16", "fp7"};
  const std::string unknown = warpnet::test::error_of([&] { precision::validate(o); });
  CHECK(unknown.find("unknown precision 'fp7'") != std::string::npos);
  CHECK(unknown.find("e2m1") != std::string::npos);  // lists the known ones
  o.precisions = {};
  o.emu_size = {0, 4, 4};
  CHECK(warpnet::test::error_of([&] { precision::validate(o); }).find("sizes must be positive, got 0") != std::string::npos);
  o.emu_size = {4, 4};
  CHECK(warpnet::test::error_of([&] { precision::run(o); }).find("M,N,K (three numbers), got 2") != std::string::npos);
}

TEST_CASE("with B stored (N,K) every format stores the transpose of what it stores for B (K,N), and the reference follows") {
  const int64_t m = 37, n = 29, k = 77;
  const precision::Operands x = precision::make_operands(m, n, k, kSeed, true);
  REQUIRE(x.b.shape() == warpnet::Shape{n, k});
  // The same values as a (K,N) matrix: quantizing either layout must store the same numbers.
  precision::Operands y = x;
  y.trans_b = false;
  y.b = x.b.transpose(0, 1).contiguous();
  const Tensor want = warpnet::cpu::matmul(x.a.to(DType::f64), y.b.to(DType::f64));
  for (int64_t i = 0; i < m * n; ++i) CHECK(x.c_ref.data<double>()[i] == want.data<double>()[i]);
  for (const std::string& p : precision::all_precisions()) {
    INFO(p);
    const precision::Quantized qx = precision::quantize(p, x), qy = precision::quantize(p, y);
    const Tensor qy_b = qy.b.transpose(0, 1).contiguous();
    REQUIRE(qx.b.shape() == qy_b.shape());
    int64_t differ = 0;
    for (int64_t i = 0; i < qx.b.numel(); ++i) differ += qx.b.data<float>()[i] != qy_b.data<float>()[i];
    CHECK(differ == 0);  // e2m1: MX blocks along K in both layouts
    CHECK(qx.scale_b == qy.scale_b);
  }
  // And the rows run in that layout: the fp32 row within the summation bound
  // of the case above (gamma_K in units of 2^-23 * sum |a||b|).
  precision::Options o;
  o.cpu_size = {m, n, k};
  o.emu = o.cuda = false;
  o.seed = kSeed;
  o.runs = 2;
  o.budget_s = 0.001;
  o.trans_b = true;
  const std::vector<precision::Row> rows = precision::run(o);
  size_t cpu = 0;
  for (const precision::Row& r : rows) cpu += r.kernel == "cpu";
  CHECK(cpu == precision::all_precisions().size());  // a CPU row for each format
  bool fp32_seen = false;
  for (const precision::Row& r : rows) {
    INFO(r.precision, " ", r.kernel);
    CHECK(r.ok);
    if (r.precision != "fp32") continue;
    fp32_seen = true;
    CHECK(r.max_ulps <= gamma_fp32(double(k)) / 0x1p-23);
  }
  CHECK(fp32_seen);
}

TEST_CASE("check_product: C of the stored inputs passes in every format; an element off by its bound, or NaN, fails") {
  // 70x90x300: C has 6300 elements, more than the 4096 sampled, so the
  // samples are spread and the last element is added.
  const precision::Operands x = precision::make_operands(70, 90, 300, kSeed);
  for (const std::string& p : precision::all_precisions()) {
    INFO(p);
    const precision::Quantized q = precision::quantize(p, x);
    Tensor c = warpnet::cpu::matmul(q.a, q.b, false, false);
    const precision::ProductCheck ok = precision::check_product(c, q, x);
    CHECK(ok.checked == 4097);
    CHECK(ok.wrong == 0);
    // The last element, which only the added sample reaches, off by a tenth
    // of its magnitude sum (far past γ = 301·2^-23 of it).
    const Tensor mags = stored_abs_products(q);
    const int64_t last = c.numel() - 1;
    c.data<float>()[last] += float(0.1 * mags.data<double>()[last]);
    const precision::ProductCheck off = precision::check_product(c, q, x);
    CHECK(off.wrong == 1);
    CHECK(off.first.starts_with("C[69,89] = "));
    // A kernel allowed 2^10 times the bound (a 14-bit accumulator) still
    // fails it: nu = 2^10·301·2^-23 = 0.037, γ = 0.038, under 0.1.
    CHECK(precision::check_product(c, q, x, 1024).wrong == 1);
    // Where nu reaches 1 no bound exists: nothing is checked, and it says so.
    const precision::ProductCheck none = precision::check_product(c, q, x, 1 << 20);
    CHECK(none.unchecked);
    CHECK(none.checked == 0);
    c.data<float>()[0] = NAN;
    CHECK(precision::check_product(c, q, x).wrong == 2);
  }
}
