// `warpnet bench allreduce` on GPUs: the gradient path of data-parallel
// training on cuda — ncclAllReduce through dist::NcclGroup, each rank on its
// own GPU — timed like the MPI rows (time_interleaved: a barrier before
// each run, the median per rank, the largest over ranks). Runs only in a
// build with NCCL, on a machine with GPUs.
//
// Status: compiled, NOT yet run on a GPU (unverified).
#include "cli/bench_allreduce_nccl.hpp"

#include <cstdio>

#include "cli/bench_allreduce_pieces.hpp"
#include "core/tensor.hpp"
#include "dist/communicator.hpp"
#include "dist/cost_model.hpp"
#include "dist/nccl_group.hpp"

namespace warpnet::cli::bench {

nlohmann::json measure_nccl(const AllreduceSettings& s) {
  nlohmann::json rows = nlohmann::json::array();
  const int n = dist::size();
  dist::use_local_gpu();  // before the buffer goes to a GPU
  dist::NcclGroup group;
  const bool talk = dist::rank() == 0;
  if (talk)
    std::printf("\n  NCCL all-reduce on the GPUs (f32 sum in place, ncclAllReduce)\n  %10s %7s %11s %10s %10s\n",
                "bytes", "runs", "median us", "algbw GB/s", "busbw GB/s");
  Tensor buffer = Tensor::zeros({s.max_bytes / int64_t(sizeof(float))}).to(Device::cuda);
  float* data = static_cast<float*>(buffer.raw());
  for (int64_t bytes = s.min_bytes; bytes <= s.max_bytes; bytes *= 2) {
    const int64_t count = bytes / int64_t(sizeof(float));
    dist::set_activity(cat("bench allreduce (NCCL), ", bytes, " bytes"));
    const TimedOp allreduce{[&] {
                              group.start_sum(data, count);
                              group.synchronize();
                            },
                            {}};
    const Timing t = time_interleaved({s.budget_s, s.min_runs, s.max_runs}, {allreduce})[0];
    const double busbw = dist::bus_bandwidth(double(bytes), t.median_s, n);
    if (talk)
      std::printf("  %10lld %7lld %11.1f %10.3f %10.3f\n", static_cast<long long>(bytes), static_cast<long long>(t.runs),
                  t.median_s * 1e6, double(bytes) / t.median_s / 1e9, busbw / 1e9);
    rows.push_back({{"bytes", bytes}, {"runs", t.runs}, {"median_s", t.median_s}, {"min_s", t.min_s},
                    {"busbw_bytes_per_s", busbw}});
  }
  return rows;
}

}  // namespace warpnet::cli::bench
