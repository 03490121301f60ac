// The calibration half of `warpnet bench allreduce`: times the pieces an
// all-reduce is made of — exchanges between two ranks, MPI's local
// reduction, an empty non-blocking barrier — each alone, and reads the cache
// size (sysfs) and the transport's eager limit (MPI_T), so that
// dist/loopback_model.hpp can predict the all-reduce before it is timed.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dist/loopback_model.hpp"

namespace warpnet::cli::bench {

// Timing of one operation on every rank at once, the all-reduce or one of
// its pieces: each run starts after a barrier (so all ranks start together,
// within the barrier's exit skew of about a microsecond); two runs warm up;
// rank 0 chooses how many runs fill the budget and every rank runs as many;
// each rank keeps the median and the fastest of its runs, and the figures
// are the largest over the ranks.
struct TimingBudget {
  double budget_s = 0.25;
  int min_runs = 5, max_runs = 2000;
};
struct Timing {
  int64_t runs = 0;
  double median_s = 0, min_s = 0;
};
// `prepare` runs before each run's barrier, untimed.
Timing time_collectively(const TimingBudget& b, const std::function<void()>& run_once,
                         const std::function<void()>& prepare = {});

// The first core's L2 and its largest data cache, in bytes, from
// /sys/devices/system/cpu/cpu0/cache/index*/ (0 when sysfs does not say),
// and a line naming every level, for the record.
struct CacheInfo {
  double l2_bytes = 0, last_level_bytes = 0;
  std::string text;
};
CacheInfo read_caches();

// Exchanges with the neighbour rank and local reductions at `message_bytes`
// (each a power of two up to buffer.size()/3 floats' bytes), and the empty
// exchange and barrier. Every rank must call it.
dist::PieceTimings measure_pieces(std::vector<float>& buffer, const std::vector<double>& message_bytes,
                                  const TimingBudget& budget);

}  // namespace warpnet::cli::bench
