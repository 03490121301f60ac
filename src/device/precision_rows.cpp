// precision_matmul.hpp, the rows: who multiplies the stored inputs (the CPU,
// the emulator's registered kernels, the GPU's), and how each is timed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>

#include "core/stats.hpp"
#include "cpu/matmul_bf16.hpp"
#include "cpu/ops.hpp"
#include "device/backend.hpp"
#include "device/cuda/gpu.hpp"
#include "device/precision_matmul.hpp"
#include "device/run.hpp"

namespace warpnet::device::precision {

namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One untimed run, then timed ones until `runs` or `budget_s` (at least 2).
// Returns the median ms and the output of the last run.
template <class F>
double time_cpu(F&& f, const Options& o, Tensor& out) {
  out = f();
  std::vector<double> ms;
  double spent = 0;
  while (int(ms.size()) < std::max(o.runs, 2)) {
    const double t0 = now_ms();
    out = f();
    ms.push_back(now_ms() - t0);
    spent += ms.back() * 1e-3;
    if (ms.size() >= 2 && spent >= o.budget_s) break;
  }
  return median(ms);
}

Row make_row(const Quantized& q, const Operands& x, const char* backend, const std::string& kernel) {
  Row r;
  r.precision = q.precision, r.scaling = q.scaling, r.backend = backend, r.kernel = kernel;
  r.M = x.M, r.N = x.N, r.K = x.K;
  r.input_bytes = q.input_bytes;
  return r;
}

// `widening`: the kernel's, for a narrow accumulator (check_product).
void finish(Row& r, double ms, const Tensor& c, const Quantized& q, const Operands& x, double widening = 1) {
  r.ms = ms;
  r.tflops = 2.0 * double(x.M) * double(x.N) * double(x.K) / (ms * 1e-3) * 1e-12;
  const Errors e = measure(c, q, x);
  r.rel_frobenius = e.rel_frobenius, r.max_ulps = e.max_ulps;
  const ProductCheck check = check_product(c, q, x, widening);
  if (check.unchecked) r.note += cat(r.note.empty() ? "" : "; ", "not checked: no error bound for sums that keep "
                                     "fewer bits over K = ", x.K);
  if (check.wrong == 0) return;
  // Not the product of its inputs: its time is no figure, and no ratio uses it.
  r.ok = false;
  r.ms = r.tflops = NAN;
  r.note = cat("wrong: ", check.wrong, " of ", check.checked, " checked elements beyond the bound of fp32 sums; ",
               check.first);
}

void failed(Row& r, const std::string& why) {
  r.ok = false;
  r.ms = r.tflops = r.rel_frobenius = r.max_ulps = NAN;
  r.note = why;
}

const std::vector<std::string>& chosen(const Options& o) { return o.precisions.empty() ? all_precisions() : o.precisions; }
bool wanted(const Options& o, const std::string& precision) {
  const auto& p = chosen(o);
  return std::find(p.begin(), p.end(), precision) != p.end();
}

// The precision a kernel's inputs are stored in: its input format's name
// (numeric's: "bf16", "e4m3"), fp32 when it has none.
std::string precision_of(const Kernel& k) { return k.input_format ? k.input_format->name : "fp32"; }

// The CPU: Eigen's fp32 GEMM on the stored values, and bf16 on AVX512_BF16.
void cpu_rows(const Options& o, const std::function<void(Row)>& emit) {
  const Operands x = make_operands(o.cpu_size[0], o.cpu_size[1], o.cpu_size[2], o.seed, o.trans_b);
  const std::string runs = cat("median of up to ", std::max(o.runs, 2), " runs, ", cpu::num_threads(), " threads");
  for (const std::string& p : chosen(o)) {
    const Quantized q = quantize(p, x);
    Row r = make_row(q, x, "cpu", "cpu");
    r.note = "Eigen fp32 GEMM on the values stored in the format (exact products, fp32 sums); " + runs;
    Tensor c;
    const double ms = time_cpu([&] { return cpu::matmul(q.a, q.b, false, x.trans_b); }, o, c);
    finish(r, ms, c, q, x);
    emit(r);
    if (p == "bf16" && cpu::has_avx512_bf16() && !x.trans_b) {  // matmul_bf16 takes B (K,N) only
      Row v = make_row(q, x, "cpu", "cpu_avx512_bf16");
      v.note = "vdpbf16ps dot products (cpu/matmul_bf16.hpp), packing to bf16 included; " + runs;
      const double vms = time_cpu([&] { return cpu::matmul_bf16(q.a, q.b); }, o, c);
      finish(v, vms, c, q, x);
      emit(v);
    }
  }
}

// The emulator: the best fp32 version and every tensor-core version, once each.
void emu_rows(const Options& o, const std::function<void(Row)>& emit) {
  std::vector<const Kernel*> chosen_kernels = {&best_kernel("matmul", Device::emu)};
  for (const Kernel* k : kernels(Copy::emulator))
    if (k->op == "matmul" && k->input_format && k->emulator) chosen_kernels.push_back(k);
  const Operands x = make_operands(o.emu_size[0], o.emu_size[1], o.emu_size[2], o.seed, o.trans_b);
  std::map<std::string, Quantized> stored;
  for (const Kernel* k : chosen_kernels) {
    const std::string p = precision_of(*k);
    if (!wanted(o, p)) continue;
    if (!stored.count(p)) stored.emplace(p, quantize(p, x));
    const Quantized& q = stored.at(p);
    Row r = make_row(q, x, "emu", k->id());
    r.note = "emulator wall time, one run: not a GPU figure";
    try {
      const double t0 = now_ms();
      const std::vector<Tensor> out = run_emulated(*k, {x.M, x.N, x.K, 0, x.trans_b ? 1 : 0}, {q.a, q.b});
      finish(r, now_ms() - t0, out.at(0), q, x, k->accumulation_widening());
    } catch (const Error& e) {
      failed(r, e.what());
    }
    emit(r);
  }
}

// The GPU: every CUDA version of a wanted input format, version 0 first.
void cuda_rows(const Options& o, const std::function<void(Row)>& emit) {
  std::map<std::string, std::vector<const Kernel*>> by_format;
  for (const Kernel* k : kernels(Copy::cuda))
    if (k->op == "matmul" && wanted(o, precision_of(*k))) by_format[precision_of(*k)].push_back(k);
  if (by_format.empty()) return;
  const Operands x = make_operands(o.gpu_size[0], o.gpu_size[1], o.gpu_size[2], o.seed, o.trans_b);
  const Sizes sizes = {x.M, x.N, x.K, 0, x.trans_b ? 1 : 0};
  const std::string how = cat("CUDA events, L2 flushed before each run, median of up to ", std::max(o.runs, 2), " runs");
  for (const std::string& p : chosen(o)) {  // table order
    if (!by_format.count(p)) continue;
    std::vector<const Kernel*>& ks = by_format[p];
    std::stable_sort(ks.begin(), ks.end(), [](auto* a, auto* b) { return a->version < b->version; });
    const Quantized q = quantize(p, x);
    std::unique_ptr<gpu::Problem> problem;
    try {
      problem = std::make_unique<gpu::Problem>(*ks.front(), sizes, std::vector<Tensor>{q.a, q.b});
    } catch (const gpu::Failure& f) {
      for (const Kernel* k : ks) {
        Row r = make_row(q, x, "cuda", k->id());
        failed(r, f.what());
        emit(r);
      }
      if (f.context_lost) return;
      continue;
    }
    for (const Kernel* k : ks) {
      Row r = make_row(q, x, "cuda", k->id());
      r.note = how;
      try {
        problem->run(*k);
        const Tensor c = problem->outputs().at(0);
        const std::vector<double> ms = problem->time(*k, 1, std::max(o.runs, 2), 2, o.budget_s);
        finish(r, median(ms), c, q, x, k->accumulation_widening());
      } catch (const gpu::Failure& f) {
        failed(r, f.what());
        emit(r);
        if (f.context_lost) return;  // nothing later in this process can use the GPU
        continue;
      }
      emit(r);
    }
  }
}

}  // namespace

void validate(const Options& o) {
  for (const std::string& p : o.precisions) format_of(p);  // throws naming the known ones
  for (const auto* size : {&o.cpu_size, &o.emu_size, &o.gpu_size}) {
    WN_CHECK(size->size() == 3, "precision: a size is M,N,K (three numbers), got ", size->size());
    for (int64_t v : *size) WN_CHECK(v > 0, "precision: sizes must be positive, got ", v);
  }
  WN_CHECK(o.runs > 0 && o.budget_s > 0, "precision: runs and budget must be positive");
}

std::vector<Row> run(const Options& o, const std::function<void(const Row&)>& on_row) {
  validate(o);
  std::vector<Row> rows;
  const std::function<void(Row)> emit = [&](Row r) {
    rows.push_back(std::move(r));
    if (on_row) on_row(rows.back());
  };
  if (o.cpu) cpu_rows(o, emit);
  if (o.emu) emu_rows(o, emit);
  if (o.cuda && gpu::probe().usable) cuda_rows(o, emit);
  return rows;
}

}  // namespace warpnet::device::precision
