// The NCCL half of `warpnet bench allreduce` (bench_allreduce_nccl.cpp):
// all-reduce latency and bus bandwidth between the ranks' GPUs.
#pragma once
#include <nlohmann/json.hpp>

#include "cli/bench_allreduce.hpp"

namespace warpnet::cli::bench {

// Every rank must call it, in a build with NCCL and with a GPU per rank
// (dist::nccl_gpus_present()); rank 0 prints. Returns one row per size.
nlohmann::json measure_nccl(const AllreduceSettings& settings);

}  // namespace warpnet::cli::bench
