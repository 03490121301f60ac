// `warpnet bench precision`: one matmul in every precision on every backend
// (device/precision_matmul.hpp), printed as one table: time, TFLOP/s, error
// against float64 (relative Frobenius norm, max ulps), the memory A and B take
// in the format. With GPU rows, the throughput ratios the issue sets targets
// for: FP8 over BF16 and BF16 over FP32 on CUDA cores. The record is the
// common bench header plus "precision" (one object per row) and "ratios"
// (bench/README.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "cli/bench.hpp"
#include "core/atomic_file.hpp"
#include "core/memory.hpp"
#include "core/number_list.hpp"
#include "cpu/ops.hpp"
#include "device/precision_matmul.hpp"

namespace warpnet::cli::bench {

namespace {

namespace precision = device::precision;

std::string figure(double v, const char* format) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// One row of the table, its header included: the kernel column holds the
// longest id, matmul/18_wgmma_fp8_persistent.
constexpr const char* kRowFormat = "  %-5s %-5s %-30s %-15s %10s %9s %11s %9s %10s\n";

void print_row(const precision::Row& r) {
  const std::string size = cat(r.M, "x", r.N, "x", r.K);
  std::printf(kRowFormat, r.precision.c_str(), r.backend.c_str(), r.kernel.c_str(),
              size.c_str(), figure(r.ms, "%.3f").c_str(), figure(r.tflops, "%.3g").c_str(),
              figure(r.rel_frobenius, "%.2e").c_str(), figure(r.max_ulps, "%.3f").c_str(), format_bytes(r.input_bytes).c_str());
  if (!r.ok) std::printf("        failed: %s\n", r.note.c_str());
  std::fflush(stdout);
}

// "1.93x (fp8 kernel over bf16 kernel; target >= 1.8x: met)" for one entry of the record's "ratios";
// `caveat`, when not empty, follows the verdict.
void print_ratio(const char* what, const nlohmann::json& r, double target, const char* caveat = "") {
  if (r.is_null()) {
    std::printf("  %-14s -   (no GPU rows for both sides)\n", what);
    return;
  }
  const double ratio = r["ratio"];
  std::printf("  %-14s %.2fx  (%s %.1f over %s %.1f TFLOP/s; target >= %.1fx: %s%s)\n", what, ratio,
              r["kernels"][0].get<std::string>().c_str(), r["tflops"][0].get<double>(),
              r["kernels"][1].get<std::string>().c_str(), r["tflops"][1].get<double>(), target,
              ratio >= target ? "met" : "NOT met", caveat);
}

const char* layout(bool trans_b) {
  return trans_b ? "A (M,K), B stored (N,K): C = A·Bᵀ (trans_b = 1; a linear layer's forward; both operands K-major)"
                 : "A (M,K), B (K,N), both row-major: C = A·B";
}

}  // namespace

nlohmann::json bench_precision(const PrecisionSettings& p, const Settings& s, const std::string& json_path) {
  precision::Options o;
  o.precisions = p.precisions;
  auto size_of = [](const std::string& text, const char* option) {
    const std::vector<int64_t> size = parse_number_list(text, cat("bench precision: ", option));
    WN_CHECK(size.size() == 3, "bench precision: ", option, " is M,N,K (three positive numbers), got '", text, "'");
    return size;
  };
  if (!p.size.empty()) o.cpu_size = o.emu_size = o.gpu_size = size_of(p.size, "--size");
  if (!p.emu_size.empty()) o.emu_size = size_of(p.emu_size, "--emu-size");
  if (!p.gpu_size.empty()) o.gpu_size = size_of(p.gpu_size, "--gpu-size");
  if (!p.backends.empty()) {
    auto has = [&](const char* b) { return std::find(p.backends.begin(), p.backends.end(), b) != p.backends.end(); };
    o.cpu = has("cpu"), o.emu = has("emu"), o.cuda = has("cuda");
  }
  o.trans_b = p.trans_b;
  o.seed = s.seed;
  o.runs = s.runs;
  o.budget_s = s.budget_s;
  precision::validate(o);  // before any work: a bad name or size fails at once
  // The emulator multiplies at 0.4 to 0.9 GFLOP/s (128^3 on the 2-core VM,
  // bench/README.md): past 1024^3 it would take tens of seconds per kernel,
  // so a large --size must leave it out rather than seem to hang.
  const double emu_flops = 2.0 * double(o.emu_size[0]) * double(o.emu_size[1]) * double(o.emu_size[2]);
  WN_CHECK(!o.emu || emu_flops <= 2.0 * 1024 * 1024 * 1024, "bench precision: ", o.emu_size[0], "x", o.emu_size[1],
           "x", o.emu_size[2], " is too large for the emulator (at most 1024^3 of work); give --emu-size, or "
           "--backends cpu,cuda");
  // The CPU rows round and multiply in fp32 (Eigen) and check against a
  // float64 product: at 8192^3 a few minutes on 2 cores; past it, hours
  // with no line printed.
  const double cpu_flops = 2.0 * double(o.cpu_size[0]) * double(o.cpu_size[1]) * double(o.cpu_size[2]);
  WN_CHECK(!o.cpu || cpu_flops <= 2.0 * 8192 * 8192 * 8192, "bench precision: ", o.cpu_size[0], "x", o.cpu_size[1],
           "x", o.cpu_size[2], " is too large for the CPU rows (at most 8192^3 of work); give a smaller --size, or "
           "--backends cuda --gpu-size M,N,K for a GPU alone");
  cpu::set_num_threads(s.threads);

  // The CPU times are only as good as the machine was idle: record how busy it was.
  double load = NAN;
  if (std::ifstream loadavg("/proc/loadavg"); !(loadavg >> load)) load = NAN;
  const device::gpu::Info info = device::gpu::probe();
  std::printf("warpnet bench precision: seed %llu; %s, uniform(-1,1), stored in each format, fp32 "
              "accumulation, against the float64 product of the fp32 originals\n",
              (unsigned long long)s.seed, layout(o.trans_b));
  std::printf("  max ulps: max |C - Cref| / (2^-p * sum_k |A||B|), p = the format's mantissa bits "
              "(about 1 = as good as the format allows)\n");
  std::printf("  emu rows are the emulator's wall time, not GPU figures; GPU: %s\n\n",
              info.usable ? cat(info.name, ", sizes ", o.gpu_size[0], "x", o.gpu_size[1], "x", o.gpu_size[2]).c_str()
                          : cat("SKIPPED: ", info.why_not).c_str());
  std::printf(kRowFormat, "prec", "where", "kernel", "MxNxK", "ms", "TFLOP/s",
              "rel. Frob.", "max ulps", "A+B bytes");
  const std::vector<precision::Row> rows = precision::run(o, print_row);
  // (The GPU asked for alone, on a machine without one: nothing measured is no success.)
  WN_CHECK(!rows.empty(), "bench precision: nothing was measured (", info.usable ? "no row ran" : info.why_not,
           "); --backends names where the rows run");

  nlohmann::json record = record_header(info, s.seed);
  record["benchmark"] = "warpnet bench precision";
  record["definitions"] = {
      {"rel_frobenius", "||C - Cref||_F / ||Cref||_F, Cref the float64 product of the original fp32 inputs"},
      {"max_ulps", "max_ij |C_ij - Cref_ij| / (2^-p * sum_k |A_ik||B_kj|), p the mantissa bits of the row's format"},
      {"input_bytes", "A and B stored in the format, scales included (e2m1 packed two per byte)"},
      {"timing", "cpu: wall clock, median; emu: emulator wall time of one run (not a GPU figure); cuda: CUDA events, "
                 "L2 flushed, median"}};
  record["settings"] = {{"max_runs", o.runs}, {"budget_s", o.budget_s}, {"threads", cpu::num_threads()}};
  record["layout"] = layout(o.trans_b);
  record["load_average_1min_at_start"] = std::isfinite(load) ? nlohmann::json(load) : nlohmann::json(nullptr);
  record["precision"] = nlohmann::json::array();
  for (const precision::Row& r : rows) record["precision"].push_back(precision::to_json(r));
  record["ratios"] = precision::ratios(rows);
  if (info.usable) {
    std::printf("\n  GPU throughput ratios (best kernel of each precision):\n");
    // Hopper's fp8 tensor cores take K-major operands only: with B row-major
    // the fp8 rows include packing B K-major (cuBLASLt's fp8 takes no other
    // layout either), so fp8's own throughput is timed with --trans-b.
    print_ratio("FP8 / BF16", record["ratios"]["fp8_over_bf16"], 1.8,
                o.trans_b ? ", in fp8's native layout"
                          : " in this layout, where fp8's B is packed K-major inside the timed region; --trans-b "
                            "times fp8 in its native layout");
    print_ratio("BF16 / FP32", record["ratios"]["bf16_over_fp32"], 10.0);
  } else {
    std::printf("\n  no GPU rows, so no FP8/BF16 and BF16/FP32 ratios: %s\n", info.why_not.c_str());
  }
  if (!json_path.empty()) {
    write_file_atomically(json_path, record.dump(1) + "\n");
    std::printf("\nwrote %s\n", json_path.c_str());
  }
  bool all_ok = true;
  for (const precision::Row& r : rows) all_ok = all_ok && r.ok;
  WN_CHECK(all_ok, "bench precision: some kernels failed (see the table and the record)");
  return record;
}

}  // namespace warpnet::cli::bench
