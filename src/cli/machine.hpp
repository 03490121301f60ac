// What machine a run happened on: for `warpnet info` and for the labels
// every recorded figure carries (machine and date).
#pragma once
#include <cstdint>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace warpnet::cli {

struct CpuInfo {
  std::string model = "unknown";
  std::set<std::string> flags;
};

// The first processor's model name and feature flags from /proc/cpuinfo.
CpuInfo read_cpuinfo();

// {"cpu": model name, "host": hostname, "date": UTC ISO 8601, "sources":
// {"hash", "commit"} of the build (source_id.hpp)}.
nlohmann::json machine_record();


}  // namespace warpnet::cli
