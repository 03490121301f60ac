// A model that predicts the time of an all-reduce between ranks on one
// machine (loopback MPI) from simpler measurements of its pieces, instead of
// fitting a line to the all-reduce itself.
//
// What is modelled is what runs: Open MPI's non-blocking all-reduce
// (coll/libnbc), with the ring algorithm that dist::Session selects
// (coll_libnbc_iallreduce_algorithm=ring), on the shared-memory transport
// (btl/vader). libnbc's ring (ompi/mca/coll/libnbc/nbc_iallreduce.c,
// allred_sched_ring) cuts the buffer of S bytes into n segments of m = S/n
// and runs a schedule of rounds:
//
//   n-1 times: exchange a segment with the neighbours (send one, receive one
//              into a temporary buffer), then reduce it into place
//              (MPI's reduction: MPI_Reduce_local);
//   n-1 times: exchange a finished segment;
//
// and every call allocates its temporary buffer (malloc of S bytes; each
// round of the first kind receives m bytes into it) and frees it at the end.
// So
//
//      T(S) = 2(n-1)·c + F(m) + (n-2)·X₁(m) + (n-1)·R(m) + (n-1)·X(m),   m = S/n,
//
// c  what libnbc adds to a round of messages (starting the round's sends
//    and receives from its schedule, noticing that they completed, moving
//    on), counted for each of the ring's 2(n-1) rounds of messages:
//    calibrated as an MPI_Ibarrier (for 2 ranks a libnbc schedule of one
//    round of empty messages) less a 0-byte exchange. Counted once per
//    call instead, the prediction fell short by about one more c (0.1 to
//    0.8 us) at 1 to 4 KiB, up to 27%;
// X  an exchange received into a segment the peer has just read (n-1
//    rounds; each rank sends m bytes and receives m bytes at once),
//    alpha-beta per regime. The protocol: eager below the transport's eager
//    limit (read from Open MPI's parameters; the sender copies into a
//    shared-memory fragment, the receiver copies out), rendezvous above (a
//    handshake, then the receiver copies straight from the sender's memory:
//    single copy, Linux CMA). The memory: copies run at cache speed while
//    the round's buffers fit the caches, slower beyond — so the rendezvous
//    line is fitted once per regime;
// R  the local reduction, a line per regime as well;
// X₁ an exchange received into the temporary buffer (n-1 rounds). While
//    glibc reuses a block of its heap for it, that block was last written
//    and read by this rank alone, so receiving into it takes no line from
//    the other core, as the other rounds' receives do (into a segment the
//    peer has just read): its own lines per regime, fitted to exchanges
//    received into such a buffer. Timed as X is, this step came out up to
//    3.7x slower than inside the ring (messages of 128 KiB on a 2-core AMD
//    EPYC VM: 89 against 24 us), and the all-reduces of 128 KiB to 4 MiB
//    were predicted 13-32% high in the median until it had lines of its own
//    (src/dist/README.md). A block of
//    at least glibc's largest mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX,
//    32 MiB on 64-bit Linux: mallopt(3)) is mapped fresh at every call and
//    returned at free, so each page the first of them writes is a page
//    fault: F, one more line, fitted to exchanges received into a freshly
//    allocated buffer (below the threshold F = X₁).
//
// The regimes are cut at message sizes given to the model: where the
// round's working set (each rank's send and receive buffer, 4m for the two
// ranks) outgrows the ranks' L2 caches (sysfs), and wherever the pieces' own
// timings say one line no longer describes them (regime_bounds below; on
// the CI VM: the reduction's step at the eager limit, and steps in the cost
// per byte near 64 KiB, 512 KiB and between 4 and 32 MiB whose causes a VM
// does not show). Each regime's lines are fitted to timings of that piece
// alone, measured at the same sizes as the all-reduce and interleaved with
// it (cli/bench_allreduce_pieces.cpp), and the all-reduce is then predicted
// at every size.
//
// Measured on the 2-core AMD EPYC CI VM (512 KiB L2 per core), 2 ranks,
// quiet, three sets of 10 runs in a row: within 25% of the measured
// all-reduce at all 19 sizes from 1 KiB to 256 MiB in 6 of 10 runs on
// 2026-12-03 and in 19 of 20 on 2026-12-04, at 18 in the others (worst
// 37%); in each set the median error within 12% at every size
// (src/dist/README.md, "The loopback model: predicting, not fitting").
// Reproduce: mpirun --oversubscribe --allow-run-as-root -np 2 warpnet bench allreduce
//            (scripts/allreduce-repeats.sh 20 for the runs in a row)
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "dist/cost_model.hpp"

namespace warpnet::dist {

// An exchange's lines: a + b·m below the eager limit, and one per regime above it.
struct ExchangeLines {
  std::optional<Line> eager;
  std::vector<std::optional<Line>> rendezvous;
};

struct LoopbackModel {
  double round_s = 0;            // c: what libnbc adds to a round of messages
  double eager_limit_bytes = 0;  // messages below go eagerly (the limit includes a header)
  // Message sizes where a new regime begins: regime k holds the messages m
  // with bounds[k-1] < m <= bounds[k] (ascending).
  std::vector<double> regime_bounds;
  // Each line is fitted where the calibration has sizes for it, and is
  // missing where it has none (a regime below the eager limit sends nothing
  // by rendezvous; a sweep that stops below 32 MiB never maps its temporary
  // buffer fresh): a prediction that needs a missing line is an error, not
  // a guess.
  ExchangeLines exchange;            // X: the rounds that receive into a segment the peer has read
  ExchangeLines temporary_exchange;  // X₁: those into the temporary buffer, a reused heap block
  std::vector<std::optional<Line>> reduce;  // R(m), one per regime
  // The first exchange when the temporary buffer (n·m bytes) is mapped fresh.
  static constexpr double kMmapThresholdBytes = 4.0 * 1024 * 1024 * sizeof(long);
  std::optional<Line> exchange_fresh;

  bool eager(double message_bytes) const { return message_bytes < eager_limit_bytes; }
  size_t regime_index(double message_bytes) const;
  double exchange_seconds(double message_bytes) const;
  double reduce_seconds(double message_bytes) const;
  double temporary_exchange_seconds(double message_bytes) const;  // X₁
  double first_exchange_seconds(int n, double message_bytes) const;  // F
  // T(S) above, for n ranks and S bytes per rank.
  double ring_allreduce_seconds(int n, double bytes) const;
  // "eager, regime 1/3": the regime of a round of S/n bytes.
  std::string regime(int n, double bytes) const;
};

// Timings of the pieces at several message sizes, and of the empty call.
struct PieceTimings {
  std::vector<Sample> exchange, reduce;
  // Exchanges received into a buffer only this rank touches, the temporary
  // buffer of a 2-rank call's first round (only sizes with 2m below the mmap
  // threshold).
  std::vector<Sample> temporary_exchange;
  // Exchanges received into a buffer of 2m bytes allocated just before and
  // freed just after (only sizes with 2m at or above the mmap threshold).
  std::vector<Sample> fresh_exchange;
  double ibarrier_s = 0, empty_exchange_s = 0;
};

// How far a regime's line may miss one of its own calibration timings:
// well inside the 25% the prediction is checked against, so that smoothing
// the pieces into lines is not where the prediction's error comes from.
constexpr double kRegimeTolerance = 0.15;

// The regime bounds, ascending: where the round's working set (4m) outgrows
// `l2_bytes_total` (the L2 of the cores the ranks run on), then, top down,
// every cut that a regime needs for its lines (the rendezvous exchanges' and
// the reduction's, each fitted by fit_line) to stay within `tolerance` of
// every timing in it: a regime that misses is cut in two at the size that
// leaves the smaller worst miss, and each part is looked at again. A regime
// of one size is never cut.
std::vector<double> regime_bounds(const PieceTimings& t, double eager_limit_bytes, double l2_bytes_total,
                                  double tolerance = kRegimeTolerance);

// Fits the model's lines to the pieces: one line per regime, from the sizes
// in it (one size gives a line through the origin; none, no line).
LoopbackModel calibrate_loopback(const PieceTimings& t, double eager_limit_bytes, std::vector<double> regime_bounds);

// The pieces without those of messages of `message_bytes`: calibrated on
// them (regime bounds chosen again), the model predicts that size from the
// other sizes alone. Predicted from its own size's pieces, a size only
// shows that the pieces add up to the whole; left out, it shows whether the
// model predicts a size it was not calibrated at (bench allreduce does both).
PieceTimings without_message(const PieceTimings& t, double message_bytes);

}  // namespace warpnet::dist
