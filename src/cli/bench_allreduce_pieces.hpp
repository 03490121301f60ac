// The calibration half of `warpnet bench allreduce`: times the pieces an
// all-reduce is made of — exchanges between two ranks, MPI's local
// reduction, an empty non-blocking barrier — each on its own, interleaved
// with the all-reduce of the same size, and reads the cache size (sysfs), so
// that dist/loopback_model.hpp can predict the all-reduce from them.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dist/loopback_model.hpp"

namespace warpnet::cli::bench {

// Timing of operations on every rank at once, the all-reduce and its
// pieces: each run starts after a barrier (so all ranks start together,
// within the barrier's exit skew of about a microsecond); each operation
// warms up with five runs, from which rank 0 chooses how many runs fill its
// budget (every rank runs as many); each rank keeps the median and the
// fastest of its runs, and the figures are the largest over the ranks.
struct TimingBudget {
  double budget_s = 0.25;  // per operation
  int min_runs = 5, max_runs = 2000;
};
struct Timing {
  int64_t runs = 0;
  double median_s = 0, min_s = 0;
};
struct TimedOp {
  std::function<void()> run_once;
  std::function<void()> prepare;  // before each run's barrier, untimed (may be empty)
};
// Several operations are timed in alternating blocks (kBlocks of them, each
// running every operation's share of its runs in turn), so that a state of
// the machine that lasts longer than a block is met by all of them alike. On
// the CI VM one such state (of the host: it cannot be seen from inside)
// lasted seconds and made the all-reduces up to 512 KiB up to 1.6x faster,
// and those from 1 MiB on up to 1.6x slower, than the pieces timed seconds
// before them predicted (src/dist/README.md). A state that changes while
// one size is timed splits every operation's runs between the two states;
// with many blocks, in nearly the same proportion. With 5, a change between
// one block's pieces and its all-reduce (a fifth of the runs) once left the
// median of the 128 KiB all-reduce in the slow state and those of its
// pieces in the fast one: 28% apart.
constexpr int kBlocks = 20;
std::vector<Timing> time_interleaved(const TimingBudget& b, const std::vector<TimedOp>& ops);

// The first core's L2 and its largest data cache, in bytes, from
// /sys/devices/system/cpu/cpu0/cache/index*/ (0 when sysfs does not say),
// and a line naming every level, for the record.
struct CacheInfo {
  double l2_bytes = 0, last_level_bytes = 0;
  std::string text;
};
CacheInfo read_caches();

// The buffers of a 2-rank ring, which the pieces run on: the all-reduce's
// own vector, whose two halves at a size are this rank's own segment
// (reduced into, then sent: libnbc's ring has rank r reduce segment r) and
// the other segment (sent, then received into); a temporary buffer of half
// the vector, a region of its own as libnbc's is (received into, then read
// by the reduction); and the neighbour rank. The pieces share the
// all-reduce's pages because the pages a buffer has change what a step
// costs between two cores: on regions of their own, in 10 runs of three
// sweeps each, the pieces predicted the all-reduce of 8 MiB 11% short in
// the median, and more than 25% short in 4 runs, up to 41%; single sweeps
// held all 19 sizes in 11 of 30 on regions of their own, 20 of 30 on the
// vector (2026-12-03, AMD EPYC VM; src/dist/README.md).
struct PieceBuffers {
  PieceBuffers(float* vector, int64_t vector_floats, float* temporary, int64_t temporary_floats);
  float *vector = nullptr, *temporary = nullptr;
  int64_t vector_floats = 0, temporary_floats = 0;
  int rank = 0, peer = 0;
  float* own(int64_t count) const { return vector + rank * count; }
  float* other(int64_t count) const { return vector + (1 - rank) * count; }
};

// The empty exchange and the empty MPI_Ibarrier, which give c, what libnbc adds to a round.
void time_round_cost(PieceBuffers& b, const TimingBudget& budget, dist::PieceTimings& t);

// The pieces at one message size — the first exchange (into the temporary
// buffer: a reused one below glibc's mmap threshold, a freshly mapped one
// from it on), a local reduction, the second exchange — timed in
// alternating blocks with `allreduce` (the all-reduce of 2m bytes they make
// up): appends them to `t` and returns the all-reduce's timing. Every rank
// must call it; 2 ranks only.
Timing time_with_pieces(PieceBuffers& b, double message_bytes, const TimedOp& allreduce, const TimingBudget& budget,
                        dist::PieceTimings& t);

}  // namespace warpnet::cli::bench
