// `warpnet bench`'s figures (bench.hpp: peak, add_ratios) and its table on
// screen (print_table), from the record of one op and size. Plain JSON
// arithmetic with no GPU in it, so tests/cli checks it on made-up records.
#include <algorithm>
#include <cstdio>

#include "cli/bench.hpp"
#include "device/datasheet.hpp"

namespace warpnet::cli::bench {

using nlohmann::json;

namespace {

// The yardstick's time: the faster median of its two timings, before the
// group's versions and after them (bench_gpu.cpp), so a drifting clock
// never flatters a version.
double vendor_ms(const json& v) {
  double ms = v["timing"]["median_ms"];
  if (v.contains("timing_after_group") && v["timing_after_group"].is_object())
    ms = std::min(ms, v["timing_after_group"]["median_ms"].get<double>());
  return ms;
}

// Whether what the kernel ran at this size does fewer multiplications than
// the op's direct count: a Winograd candidate of warpnet's (the record's
// `candidate`; conv v10-12 and dgrad v6-8 fall back on GEMM candidates where
// Winograd does not fit), or cuDNN's choice of a Winograd or FFT algorithm
// (its tuned text, conv_cudnn.cu).
bool fewer_operations(const json& r) {
  const std::string candidate = r.value("candidate", ""), tuned = r.value("tuned", "");
  return candidate.find("winograd") != std::string::npos || tuned.find("chosen: WINOGRAD") != std::string::npos ||
         tuned.find("chosen: FFT") != std::string::npos;
}

}  // namespace

json peak(const device::gpu::Info& info, const std::string& format) {
  namespace ds = device::datasheet;
  const ds::Arch* arch = ds::find_arch(info.cc_major, info.cc_minor);
  const bool fp32 = format == "fp32", fp8 = format == "e4m3" || format == "e5m2";
  if (!fp32 && !fp8 && format != "fp16" && format != "bf16")
    return {{"tflops", nullptr}, {"basis", cat("no peak rate for inputs in ", format)}};
  const char* unit = fp32 ? "FP32 FMA lanes" : fp8 ? "fp8 tensor cores, dense" : "16-bit tensor cores, dense";
  if (!arch) return {{"tflops", nullptr}, {"basis", cat("no peak table entry for sm_", info.cc_major, info.cc_minor)}};
  const double per_clock = fp32 ? arch->fp32 : fp8 ? arch->fp8 : arch->tensor16;
  if (per_clock == 0)
    return {{"tflops", nullptr}, {"basis", cat("no ", unit, " rate for sm_", info.cc_major, info.cc_minor)}};
  const ds::Part* part = ds::find_part(info.cc_major, info.cc_minor, info.multiprocessors, info.name.c_str());
  const double clock_ghz = fp32 ? info.clock_ghz : ds::tensor_clock_ghz(part, info.clock_ghz);
  char basis[800];
  std::snprintf(basis, sizeof basis, "%d SMs x %.3f GHz (%s) x %.0f FLOP/clk/SM (%s, sm_%d%d; from %s)",
                info.multiprocessors, clock_ghz,
                clock_ghz != info.clock_ghz
                    ? cat("the datasheet's clock for its tensor rates, below the device's reported peak: ",
                          part->source).c_str()
                    : "the device's reported peak clock",
                per_clock, unit, info.cc_major, info.cc_minor, arch->source);
  return {{"tflops", ds::tflops(info.multiprocessors, clock_ghz, per_clock)}, {"basis", basis}};
}

void add_ratios(json& gpu, const device::gpu::Info& info, const json& cpu, double flops) {
  const double copy_gbps = gpu["copy"].is_object() ? gpu["copy"].value("gbps", 0.0) : 0.0;
  double cpu_ms = 0;
  if (cpu.contains("rows") && !cpu["rows"].empty() && cpu["rows"][0]["timing"].is_object())
    cpu_ms = cpu["rows"][0]["timing"]["median_ms"];
  for (json& r : gpu["kernels"]) {
    if (r["status"] != "ok") continue;
    const double ms = r["timing"]["median_ms"];
    r["tflops"] = flops / (ms * 1e-3) * 1e-12;
    // The yardstick: the first version 0 of the row's formats that ran (the
    // registry's order; conv2d/00_cudnn_implicit_gemm is measured against it too).
    for (const json& v : gpu["kernels"])
      if (v["version"] == 0 && v["input_format"] == r["input_format"] &&
          v.value("output_format", "fp32") == r.value("output_format", "fp32") && v["status"] == "ok") {
        r["vendor"] = v["kernel"];
        r["percent_of_vendor"] = v["kernel"] == r["kernel"] ? 100.0 : 100.0 * vendor_ms(v) / ms;
        break;
      }
    const json p = peak(info, r["input_format"].get<std::string>());
    r["peak"] = p;
    if (p["tflops"].is_number()) {
      r["percent_of_peak"] = 100.0 * r["tflops"].get<double>() / p["tflops"].get<double>();
      // A Winograd or FFT algorithm does fewer operations than the op's
      // count: its rate is the op's, not the hardware's, whether or not it
      // passes the peak (as cuDNN's did at 111-123%).
      if (fewer_operations(r))
        r["peak_note"] = "effective rate: the op's FLOP count over the time; the kernel's algorithm (Winograd or "
                         "FFT) does fewer operations than the direct one, so this is not a share of the hardware's "
                         "peak";
      else if (r["percent_of_peak"].get<double>() > 100)
        r["peak_note"] = "effective rate: the op's FLOP count over the time, above the hardware's peak, so the "
                         "kernel's algorithm does fewer operations than the direct one";
    }
    if (cpu_ms > 0) r["speedup_over_cpu"] = cpu_ms / ms;
    if (r.contains("bytes_least")) {
      r["gbps"] = r["bytes_least"].get<double>() / (ms * 1e-3) * 1e-9;
      if (copy_gbps > 0) r["percent_of_copy"] = 100.0 * r["gbps"].get<double>() / copy_gbps;
    }
  }
}

namespace {

std::string fmt(const json& j, const char* format, const char* missing = "-") {
  if (!j.is_number()) return missing;
  char buf[64];
  std::snprintf(buf, sizeof buf, format, j.get<double>());
  return buf;
}

}  // namespace

void print_table(const json& rec, double flops) {
  std::printf("\n  %-24s %-5s %-22s %10s %9s %8s %7s %8s %8s %7s\n", "version", "input", "check", "median ms", "TFLOP/s",
              "% vendor", "% peak", "x CPU", "GB/s", "% copy");
  if (rec["gpu"].contains("kernels")) {
    const json& copy = rec["gpu"]["copy"];
    if (copy.is_object() && copy.contains("gbps"))
      std::printf("  (GB/s: each input read and each output written once; %% copy: of the in-run device-to-device "
                  "copy, %.0f GB/s)\n", copy["gbps"].get<double>());
    for (const json& r : rec["gpu"]["kernels"]) {
      std::string check = r["status"] == "ok" ? "ok" : r["status"].get<std::string>();
      if (r.contains("verify")) {
        const json& v = r["verify"];
        const std::string ref = !v.contains("reference") ? "" : v["reference"].get<std::string>().rfind("CPU", 0) == 0 ? " cpu" : v.contains("relative_error") ? " v0" : " poison";
        if (v.contains("relative_error")) check.append(" ").append(fmt(v["relative_error"], "%.1e", "NaN"));
        check += ref;
      }
      const json t = r.value("timing", json());
      std::printf("  %-24s %-5s %-22s %10s %9s %8s %7s %8s %8s %7s\n", r["kernel"].get<std::string>().c_str(),
                  r["input_format"].get<std::string>().c_str(), check.c_str(),
                  fmt(t.is_object() ? t["median_ms"] : json(), "%.3f").c_str(), fmt(r.value("tflops", json()), "%.2f").c_str(),
                  fmt(r.value("percent_of_vendor", json()), "%.1f").c_str(), fmt(r.value("percent_of_peak", json()), "%.1f").c_str(),
                  fmt(r.value("speedup_over_cpu", json()), "%.1f").c_str(), fmt(r.value("gbps", json()), "%.0f").c_str(),
                  fmt(r.value("percent_of_copy", json()), "%.1f").c_str());
      if (r.contains("tuned")) std::printf("    (%s)\n", r["tuned"].get<std::string>().c_str());
      if (r.contains("verify") && r["verify"].contains("bound_note"))
        std::printf("    (check: %s)\n", r["verify"]["bound_note"].get<std::string>().c_str());
    }
    const json& rows = rec["gpu"]["kernels"];
    if (std::any_of(rows.begin(), rows.end(), [](const json& r) { return r.contains("peak_note"); }))
      std::printf("  (%% peak above 100: the op's FLOP count over the time, so that kernel's algorithm does fewer "
                  "operations than the direct one)\n");
    if (!rows.empty() && std::none_of(rows.begin(), rows.end(), [](const json& r) { return r["version"] == 0; }))
      std::printf("  (no version 0 for %s in this build, so no %% vendor: the conv ops' cuDNN baseline is compiled "
                  "only where CMake finds cuDNN)\n", rec["op"].get<std::string>().c_str());
  } else {
    std::printf("  GPU: skipped: %s\n", rec["gpu"].value("skipped", std::string("?")).c_str());
  }
  if (rec["cpu"].contains("rows")) {
    for (const json& r : rec["cpu"]["rows"]) {
      std::string name = cat("cpu ", r["library"].get<std::string>());
      if (r["library"] == "warpnet" && rec["op"] == "matmul") name += " (Eigen)";
      if (r.contains("about")) name += cat(" (", r["about"]["corename"].get<std::string>(), ")");
      const json& t = r["timing"];
      // TFLOP/s to three significant figures: a CPU does LeNet-sized layers
      // at a few GFLOP/s, which three decimals would print as 0.003.
      std::printf("  %-24s %-5s %-22s %10s %9s   (%d threads)\n", name.c_str(), "fp32",
                  r.contains("relative_difference_from_warpnet") ? cat("vs warpnet ", fmt(r["relative_difference_from_warpnet"], "%.1e")).c_str() : "",
                  fmt(t["median_ms"], "%.3f").c_str(), fmt(json(flops / (t["median_ms"].get<double>() * 1e-3) * 1e-12), "%.3g").c_str(),
                  rec["cpu"]["threads"].get<int>());
    }
    if (rec["cpu"].contains("peer")) std::printf("  cpu peer: %s\n", rec["cpu"]["peer"].get<std::string>().c_str());
  } else {
    std::printf("  CPU: skipped: %s\n", rec["cpu"].value("skipped", std::string("?")).c_str());
  }
}

}  // namespace warpnet::cli::bench
