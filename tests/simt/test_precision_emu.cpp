// device/precision_matmul.hpp's emulator rows: each tensor-core version (and
// the best fp32 one) multiplies the same stored inputs as the CPU row of its
// format, so its error against float64 must equal the CPU's up to the order
// of the fp32 additions.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <set>

#include "core/rounding.hpp"
#include "cpu/ops.hpp"
#include "device/precision_matmul.hpp"

namespace precision = warpnet::device::precision;
using warpnet::DType;
using warpnet::Tensor;

TEST_CASE("emulator rows have the CPU row's error for the same format, within the fp32 summation bound") {
  const int64_t m = 64, n = 48, k = 40;
  const uint64_t seed = 7;
  precision::Options o;
  o.cpu_size = o.emu_size = {m, n, k};
  o.cuda = false;
  o.seed = seed;
  o.runs = 2;
  o.budget_s = 0.001;
  std::map<std::string, precision::Row> cpu;
  std::vector<precision::Row> emu;
  for (const precision::Row& r : precision::run(o)) {
    if (r.backend == "cpu" && r.kernel == "cpu") cpu[r.precision] = r;
    if (r.backend == "emu") emu.push_back(r);
  }
  std::set<std::string> formats;
  for (const precision::Row& r : emu) formats.insert(r.precision);
  // The registry's tensor-core versions: bf16 (wmma, mma.sync), e4m3 (fp8);
  // and the best fp32 version.
  CHECK(formats == std::set<std::string>{"fp32", "bf16", "e4m3"});

  const precision::Operands x = precision::make_operands(m, n, k, seed);
  double ref_norm = 0;
  for (int64_t i = 0; i < m * n; ++i) ref_norm += x.c_ref.data<double>()[i] * x.c_ref.data<double>()[i];
  ref_norm = std::sqrt(ref_norm);
  for (const precision::Row& r : emu) {
    const precision::Quantized q = precision::quantize(r.precision, x);
    // S = sum_k |a_q||b_q| of the stored values, divided by the scales as C is.
    auto abs64 = [](const Tensor& t) {
      Tensor out = t.to(DType::f64);
      for (int64_t i = 0; i < out.numel(); ++i) out.data<double>()[i] = std::fabs(out.data<double>()[i]);
      return out;
    };
    const Tensor s = warpnet::cpu::matmul(abs64(q.a), abs64(q.b));
    double s_norm = 0;
    for (int64_t i = 0; i < m * n; ++i) s_norm += s.data<double>()[i] * s.data<double>()[i];
    s_norm = std::sqrt(s_norm) / (double(q.scale_a) * double(q.scale_b));
    // Same stored inputs, exact products (16- and 8-bit values multiply
    // exactly in fp32), fp32 sums in different orders: the CPU's K FMAs,
    // the emulated tensor core's one rounding per 16- or 32-wide k-step.
    // fp32 products may round once more (an FMUL before an FADD): K + 1
    // roundings at most behind any element. Each C is then within
    // gamma_(K+1) * S of the exact sum element by element, so the two differ
    // by at most 2 gamma_(K+1) S, and their relative Frobenius errors by at
    // most 2 gamma_(K+1) ||S||_F / ||Cref||_F (triangle inequality).
    const double gamma = warpnet::gamma_fp32(double(k + 1));
    const double bound = 2 * gamma * s_norm / ref_norm;
    const precision::Row& c = cpu.at(r.precision);
    INFO(r.kernel, " ", r.precision, ": emu ", r.rel_frobenius, ", cpu ", c.rel_frobenius, ", bound ", bound);
    CHECK(r.ok);
    CHECK(std::fabs(r.rel_frobenius - c.rel_frobenius) <= bound);
    CHECK(r.input_bytes == c.input_bytes);
  }
}
