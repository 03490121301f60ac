// The benchmark records committed under bench/results/ (`warpnet bench`,
// scripts/gpu-check.sh): where a chapter takes its GPU figures from, since
// GPU figures come only from a run on a real GPU, recorded with its machine
// and date. Needs WARPNET_SOURCE_DIR (the chapter's CMakeLists defines it).
#pragma once
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

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
      if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<BenchRecord> records;
  for (const fs::path& file : files) {
    std::ifstream in(file);
    nlohmann::json json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!json.is_discarded()) records.push_back({file, std::move(json)});
  }
  return records;
}

}  // namespace warpnet::lesson
