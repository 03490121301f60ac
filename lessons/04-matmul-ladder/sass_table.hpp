// Lesson 04's "Counting the loop" table: what scripts/sass-loops.py found in
// each kernel's main loop (its record, bench/results/sass-loops-*.txt, made
// from the sm_90a bundle on a machine without a GPU), beside the kernel's
// rate in the newest GPU record that timed it. Generated, so that the
// chapter's counts are the record's and change only with it.
#pragma once
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "device/registry.hpp"
#include "lessons/bench_records.hpp"

namespace warpnet::lesson {

// One kernel's main loop, as the record's second line of its entry has it.
struct LoopCount {
  int math = 0, instructions = 0, branches_inside = 0;
};

// The newest sass-loops record (sass-loops-<target>-<YYYY-MM-DD>.txt: by
// the date its name ends with, then by name), or an empty path.
inline std::filesystem::path newest_sass_record() {
  namespace fs = std::filesystem;
  const fs::path results = fs::path(WARPNET_SOURCE_DIR) / "bench" / "results";
  fs::path newest;
  std::string newest_key;
  if (fs::is_directory(results))
    for (const auto& entry : fs::directory_iterator(results)) {
      const std::string name = entry.path().filename().string();
      if (!name.starts_with("sass-loops-") || !name.ends_with(".txt") || name.size() < 25) continue;
      const std::string key = name.substr(name.size() - 14, 10) + name;  // the date first
      if (key > newest_key) newest = entry.path(), newest_key = key;
    }
  return newest;
}

// The record's entries for the kernel named `kernel` (without "void ", the
// anonymous namespace and the parameter list): one, unless the binary holds
// differing copies of it.
inline std::vector<LoopCount> sass_loops(const std::filesystem::path& record, const std::string& kernel) {
  static const std::regex counts(R"(^  (\d+) math of (\d+) \()");
  static const std::regex branches(R"((\d+) branch\(es\) inside)");
  static const std::regex anonymous(R"(\(anonymous namespace\)::)");
  std::ifstream in(record);
  std::vector<LoopCount> found;
  bool wanted = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("#")) continue;
    if (!line.starts_with("  ")) {  // a kernel's name
      std::string name = std::regex_replace(line, anonymous, "");
      if (name.starts_with("void ")) name = name.substr(5);
      wanted = name.substr(0, name.find('(')) == kernel;
      continue;
    }
    std::smatch m;
    if (!wanted || !std::regex_search(line, m, counts)) continue;
    LoopCount c{std::stoi(m[1]), std::stoi(m[2]), 0};
    if (std::regex_search(line, m, branches)) c.branches_inside = std::stoi(m[1]);
    found.push_back(c);
  }
  return found;
}

// TFLOP/s of `kernel_id` in the newest GPU record (by the date it holds)
// that timed it: a matmul at 4096^3 (no transposes), or a peak kernel.
// `source`: that record, as "GPU, date (file)"; untouched when none did.
inline std::string measured_tflops(const std::string& kernel_id, std::string& source) {
  namespace fs = std::filesystem;
  std::string found = "not yet", newest;
  const nlohmann::json square = nlohmann::json::array({4096, 4096, 4096, 0, 0});
  for (const BenchRecord& r : bench_records()) {
    if (!is_gpu_bench_record(r.json)) continue;
    for (const nlohmann::json& op : r.json["ops"]) {
      const std::string name = op.value("op", "");
      if (!op["gpu"].contains("kernels") || !(name == "peak" || (name == "matmul" && op["sizes"] == square)))
        continue;
      for (const nlohmann::json& k : op["gpu"]["kernels"])
        if (k.value("kernel", "") == kernel_id && k.value("status", "") == "ok" && k["tflops"].is_number() &&
            r.json.value("date", "") >= newest) {
          newest = r.json.value("date", "");
          const double tflops = k["tflops"].get<double>();
          found = fixed(tflops, tflops < 100 ? 1 : 0);
          source = r.json["gpu"].value("name", "?") + ", " + r.json.value("date", "?").substr(0, 10) + " (`" +
                   fs::relative(r.file, WARPNET_SOURCE_DIR).string() + "`)";
        }
    }
  }
  return found;
}

// A row of the table: how the chapter names the loop, the kernel's name in
// the record (the NN instance), and its id in the GPU records; or, for an
// autotuned version's candidate, which has no row of its own there, what
// the rate column says instead.
struct SassRow {
  const char* label;
  const char* kernel;
  const char* kernel_id;
  const char* candidate_of = "";
};

inline const std::vector<SassRow>& sass_rows() {
  static const std::vector<SassRow> rows = {
      {"peak/01, FFMA 8×8 from shared", "peak_ffma_smem<512, 8>", "peak/01_ffma_8x8"},
      {"peak/02, FFMA 8×16 from shared", "peak_ffma_smem<256, 16>", "peak/02_ffma_8x16"},
      {"matmul/09", "sgemm_warptiling<128, 128, 16, 64, 32, 2, 2, 4, 4, false, false, 2, false, 0>",
       "matmul/09_warptiling"},
      {"peak/09, v09's main loop on L2", "peak_ffma_cp_async", "peak/09_ffma_8x8_cp_async"},
      {"matmul/10, candidate 12: v09 with hoisted copies",
       "sgemm_warptiling<128, 128, 16, 64, 32, 2, 2, 4, 4, false, false, 2, true, 2>", "", "in 10's tune"},
      {"matmul/20", "sgemm_tma<false, false>", "matmul/20_sgemm_tma"},
      {"peak/05, `ldmatrix` + `mma.sync`", "peak_mma_sync_ldmatrix", "peak/05_mma_sync_ldmatrix"},
      {"peak/07, with v17's ring and barrier", "peak_mma_sync_ring", "peak/07_mma_sync_ring"},
      {"peak/08, and v17's copies", "peak_mma_sync_cp_async", "peak/08_mma_sync_cp_async"},
      {"matmul/17", "gemm_mma_sync_multistage<mma_sync_v17::Tiles<256, 4, false>, false, false>",
       "matmul/17_mma_sync_multistage"},
      {"matmul/24, candidate 9: 17 with hoisted copies",
       "gemm_mma_sync_multistage<mma_sync_v17::Tiles<256, 4, true>, false, false>", "", "in 24's tune"},
      {"matmul/23 (hoisted copies, fragments a slice ahead)",
       "gemm_mma_sync_pipelined<mma_sync_v17::Tiles<256, 4, true>, false, false>", "matmul/23_mma_sync_pipelined"},
      {"matmul/19 (TMA, no copies)", "gemm_mma_sync_tma<false, false>", "matmul/19_mma_sync_tma"},
  };
  return rows;
}

// The table, its source named under it. Every row must be in the record:
// a kernel renamed or gone fails the chapter's check (expect).
inline void print_sass_table() {
  namespace fs = std::filesystem;
  const fs::path record = newest_sass_record();
  if (record.empty()) {
    std::printf("No sass-loops record in bench/results/ (scripts/sass-record.sh writes one from the bundle).\n");
    expect(false, "bench/results holds a sass-loops record");
    return;
  }
  std::printf("| kernel | main loop: math / instructions | share | measured TFLOP/s (4096³) |\n"
              "|---|---|---:|---:|\n");
  std::vector<std::string> sources;  // the GPU records the rates come from
  for (const SassRow& row : sass_rows()) {
    if (*row.kernel_id) {
      bool registered = false;
      for (const device::Kernel* k : device::kernels(device::Copy::traced)) registered |= k->id() == row.kernel_id;
      expect(registered, std::string(row.kernel_id) + " is a registered kernel");
    }
    const std::vector<LoopCount> found = sass_loops(record, row.kernel);
    expect(found.size() == 1, std::string(row.kernel) + " is in " + record.filename().string() + " once (" +
                                  std::to_string(found.size()) + " entries)");
    if (found.empty()) continue;
    const LoopCount* c = &found.front();
    std::string source;
    const std::string measured = *row.kernel_id ? measured_tflops(row.kernel_id, source) : row.candidate_of;
    if (!source.empty() && std::find(sources.begin(), sources.end(), source) == sources.end())
      sources.push_back(source);
    std::printf("| %s | %d / %d%s | %.0f%% | %s |\n", row.label, c->math, c->instructions,
                c->branches_inside ? " ¹" : "", 100.0 * c->math / c->instructions, measured.c_str());
  }
  std::printf("\nCounts from `%s` (`build/bin/lesson04 --markdown sass`; the NN layout). ¹ Branches inside "
              "the loop besides the ones back to its start: the count is static. Rates from the newest GPU record "
              "that timed the kernel (a matmul at 4096³, a peak kernel at its own size):",
              fs::relative(record, WARPNET_SOURCE_DIR).c_str());
  for (size_t i = 0; i < sources.size(); ++i) std::printf("%s %s", i ? ";" : "", sources[i].c_str());
  std::printf("%s\n", sources.empty() ? " none yet." : ".");
}

}  // namespace warpnet::lesson
