#include "cli/machine.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "cli/source_id.hpp"

namespace warpnet::cli {

CpuInfo read_cpuinfo() {
  CpuInfo info;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && info.model == "unknown") info.model = value;
    if (key == "flags" && info.flags.empty()) {
      std::istringstream words(value);
      for (std::string w; words >> w;) info.flags.insert(w);
    }
  }
  return info;
}

nlohmann::json machine_record() {
  char host[256] = "unknown";
  ::gethostname(host, sizeof host - 1);
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return {{"cpu", read_cpuinfo().model},
          {"host", host},
          {"date", date},
          {"sources", {{"hash", build::source_hash}, {"commit", build::git_commit}}}};
}

}  // namespace warpnet::cli
