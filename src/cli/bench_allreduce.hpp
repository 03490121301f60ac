// `warpnet bench allreduce`, run under mpirun: all-reduce latency and bus
// bandwidth against message size on the ranks that are there (loopback MPI
// on one machine), the alpha-beta model fitted to them with its error per
// size, and the model's prediction for GPUs joined by PCIe 5, NVLink 4,
// NVLink 5 or an NVL72 domain (dist/cost_model.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace warpnet::cli::bench {

struct AllreduceSettings {
  int64_t min_bytes = 1024;
  int64_t max_bytes = int64_t(256) << 20;
  double budget_s = 0.25;  // timed seconds per size
  int min_runs = 5, max_runs = 2000;
  double timeout_s = 60;  // a rank that does not answer for this long is reported hung
  // The prediction: gradients of `params` values of `grad_bytes` each,
  // `compute_ms` of forward and backward per GPU and step (0: not given).
  double params = 0;
  int grad_bytes = 2;
  double compute_ms = 0;
  std::vector<int> gpus = {2, 8, 72};
};

// Measures (rank 0 prints and returns the record; every rank must call it),
// fits and predicts. Without MPI, or alone, it prints only the predictions.
nlohmann::json bench_allreduce(const AllreduceSettings& settings);

}  // namespace warpnet::cli::bench
