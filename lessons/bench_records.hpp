// The benchmark records committed under bench/results/ (`warpnet bench`,
// scripts/gpu-check.sh): where a chapter takes its GPU figures from, since
// GPU figures come only from a run on a real GPU, recorded with its machine
// and date. Needs WARPNET_SOURCE_DIR (the chapter's CMakeLists defines it).
#pragma once
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lessons/lesson_checks.hpp"

namespace warpnet::lesson {

struct BenchRecord {
  std::filesystem::path file;
  nlohmann::json json;
};

// Every .json file of bench/results that parses, in file-name order (the
// names end with the date: oldest first).
inline std::vector<BenchRecord> bench_records() {
  namespace fs = std::filesystem;
  const fs::path results = fs::path(WARPNET_SOURCE_DIR) / "bench" / "results";
  std::vector<fs::path> files;
  if (fs::is_directory(results))
    for (const auto& entry : fs::directory_iterator(results))
      if (entry.path().extension() == ".json" && entry.is_regular_file())  // (a pipe would block the read)
        files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<BenchRecord> records;
  for (const fs::path& file : files) {
    std::ifstream in(file);
    nlohmann::json json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!json.is_discarded()) records.push_back({file, std::move(json)});
  }
  return records;
}

// j[key] without the undefined behaviour of a const operator[] on a missing
// key: a field that is not there (or a j that is no object) reads as null,
// which iterates as empty and fails .value() and .get<>() with a type error,
// which show_each_record reports.
inline const nlohmann::json& field(const nlohmann::json& j, const char* key) {
  static const nlohmann::json null;
  if (!j.is_object()) return null;
  const auto it = j.find(key);
  return it == j.end() ? null : *it;
}

// Whether `record` is a `warpnet bench` record made on a usable GPU: where
// a chapter's GPU tables come from (a record of a machine without one holds
// CPU figures only).
inline bool is_gpu_bench_record(const nlohmann::json& record) {
  const nlohmann::json& usable = field(field(record, "gpu"), "usable");
  return record.is_object() && record.value("benchmark", "") == "warpnet bench" && usable.is_boolean() &&
         usable.get<bool>();
}

// Calls `show` on each record of bench_records() in turn. A record whose
// fields are not what `show` reads (hand-edited, or written by another
// version) is named and passed over; the chapter goes on with the others.
template <class Show>
void show_each_record(Show show) {
  for (const BenchRecord& r : bench_records()) {
    try {
      show(r);
    } catch (const nlohmann::json::exception& e) {
      std::printf("\n(%s: passed over, a field is not what this chapter reads: %s)\n",
                  r.file.filename().string().c_str(), e.what());
    }
  }
}

// A figure of a record, or "-" where it has none (a failed or skipped kernel).
inline std::string record_number(const nlohmann::json& v, int digits) {
  return v.is_number() ? fixed(v.get<double>(), digits) : "-";
}

// The markdown table of one op's GPU kernels in a `warpnet bench` record
// (`op["gpu"]["kernels"]`): time, TFLOP/s, % of version 0 (`vendor`: what
// the column calls it, "cuBLAS" or "version 0"), % of peak, speed-up over the
// CPU of the same record (print_cpu_column_note names it).
inline void print_gpu_kernel_table(const nlohmann::json& op, const char* vendor) {
  std::printf("| version | inputs | ms | TFLOP/s | %% of %s (same inputs) | %% of peak | x CPU |\n"
              "|---|---|---:|---:|---:|---:|---:|\n",
              vendor);
  const nlohmann::json none;
  for (const nlohmann::json& k : field(field(op, "gpu"), "kernels")) {
    const bool ok = k.value("status", "") == "ok";
    std::printf("| %s | %s | %s | %s | %s | %s | %s |\n", k.value("kernel", "?").c_str(),
                k.value("input_format", "?").c_str(),
                ok ? record_number(field(field(k, "timing"), "median_ms"), 3).c_str() : k.value("status", "?").c_str(),
                record_number(k.value("tflops", none), 1).c_str(),
                record_number(k.value("percent_of_vendor", none), 1).c_str(),
                record_number(k.value("percent_of_peak", none), 1).c_str(),
                record_number(k.value("speedup_over_cpu", none), 0).c_str());
  }
}

// Under a record's tables, once: which CPU the "x CPU" column divides by —
// the fp32 CPU version 0 on the record's own host (the first op that ran one).
inline void print_cpu_column_note(const nlohmann::json& record) {
  for (const nlohmann::json& op : field(record, "ops")) {
    const nlohmann::json& cpu = field(op, "cpu");
    if (!cpu.contains("threads")) continue;
    std::printf("\nx CPU: against the fp32 CPU version 0 (Eigen for matmul) on this record's own host, %s, %d threads "
                "(not the 2-core VM of chapters 01-02).\n",
                record.value("cpu", "?").c_str(), cpu["threads"].get<int>());
    return;
  }
  std::printf("\nx CPU: no CPU run in this record (--no-cpu).\n");
}

}  // namespace warpnet::lesson
