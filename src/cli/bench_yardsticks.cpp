// Which version 0 a new bench worker runs again before the kernels left
// (bench.hpp, yardsticks_to_rerun): plain bookkeeping over the rows so far,
// kept apart from the worker processes (bench_workers.cpp) so that
// tests/cli checks it without a GPU.
#include <algorithm>

#include "cli/bench.hpp"

namespace warpnet::cli::bench {

bool output_checked(const nlohmann::json& row) {
  return row.contains("verify") && row["verify"].value("ok", false) && !row.value("context_lost", false);
}

std::vector<std::string> yardsticks_to_rerun(const std::vector<Entry>& kernels,
                                             const std::map<std::string, nlohmann::json>& results,
                                             const std::vector<std::string>& todo,
                                             const std::set<std::string>& rerun_failed) {
  const auto formats_of = [&](const std::string& id) {
    const auto it = std::find_if(kernels.begin(), kernels.end(), [&](const Entry& e) { return e.id == id; });
    return it == kernels.end() ? std::string() : it->formats;
  };
  // The worker takes as its yardstick the first version 0 of a format pair
  // whose output passed the check (bench_gpu.cpp): that output is what a
  // re-run is for, timed or not. One that lost the context, or whose re-run
  // failed, may be what killed a worker: the rest go on without it.
  const auto gave_output = [&](const std::string& id) {
    const auto it = results.find(id);
    return it != results.end() && output_checked(it->second) && !rerun_failed.count(id);
  };
  std::vector<std::string> rerun, formats_taken;
  for (const Entry& k : kernels) {
    if (k.version != 0 || std::find(formats_taken.begin(), formats_taken.end(), k.formats) != formats_taken.end())
      continue;
    const bool still_to_run =
        std::any_of(todo.begin(), todo.end(), [&](const std::string& id) { return formats_of(id) == k.formats; });
    if (!still_to_run) continue;
    // The first version 0 of these formats that gave an output; an earlier
    // one that did not was no yardstick in its worker either.
    if (gave_output(k.id)) {
      rerun.push_back(k.id);
      formats_taken.push_back(k.formats);
    }
  }
  return rerun;
}

}  // namespace warpnet::cli::bench
