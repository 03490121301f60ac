// The alpha-beta cost of an all-reduce, and what it means for a training
// step: a time per message (alpha, the latency of one step of the
// algorithm) plus a time per byte (1/beta, the link's bandwidth), counted
// over the steps each algorithm takes.
//
// n ranks, S bytes in each rank's buffer, B bytes/s per direction of each
// rank's link, α per step, α₀ once per call (launch, setup):
//
//   ring  (reduce-scatter, then all-gather; Patarasuk & Yuan, J. Parallel
//         Distrib. Comput. 69(2), 2009; Thakur, Rabenseifner & Gropp, Int. J.
//         High Perform. Comput. Appl. 19(1), 2005): 2(n-1) steps, each moving
//         S/n bytes per rank each way:
//           T_ring = α₀ + 2(n-1)·α + 2(n-1)/n · S/B
//   tree  (reduce up a binary tree, broadcast down, pipelined in chunks over
//         two complementary trees, as NCCL's "double binary tree" does;
//         Sanders, Speck & Träff, Parallel Comput. 35(12), 2009): depth
//         d = ceil(log2 n) each way, and every rank sends and receives about
//         S per phase:
//           T_tree = α₀ + 2·d·α + 2·S/B
//         NCCL's trees span nodes only: inside a node the GPUs form a chain,
//         so its tuner counts (n/nodes − 1) + ceil(log2 nodes) hops each way.
//         Every link here joins one node (a host, an HGX board, one NVL72
//         domain): a chain of n − 1, where the ring always wins on NVLink.
//         (NCCL's own tuner, src/graph/tuning.cc, converts bus bandwidth to
//         algorithm bandwidth with the same factors: n/(2(n-1)) for the ring,
//         1/2 for trees.) Ring wins on bandwidth, tree on latency.
//
// Bus bandwidth (nccl-tests, doc/PERFORMANCE.md): algbw = S/t, and
// busbw = algbw · 2(n-1)/n, the rate each rank's link carries in a ring, so
// it is comparable with B whatever n is.
//
// On loopback MPI (ranks on one machine) the "link" is memory and the
// library's protocols, and one α and one B do not describe it:
// dist/loopback_model.hpp predicts that case from timings of its pieces.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace warpnet::dist {

enum class Algorithm { ring, tree };

struct Interconnect {
  std::string name;         // "nvlink4"
  std::string description;  // "NVLink 4 (H100/H200 SXM, NVSwitch)"
  double bytes_per_s;       // per GPU, per direction
  double alpha0_s;          // once per all-reduce
  double alpha_ring_s;      // per ring step
  double alpha_tree_s;      // per tree hop
  int max_gpus;             // the largest group this link joins (one NVLink domain, one host)
  std::string source;       // where the figures come from
};

// PCIe 5 x16, NVLink 4 (H100/H200), NVLink 5 (B200) and a GB200 NVL72
// domain, with sources (cost_model.cpp).
const std::vector<Interconnect>& interconnects();
const Interconnect& interconnect(const std::string& name);

struct AlphaBeta {
  double alpha0_s = 0;   // fixed cost of a call
  double alpha_s = 0;    // per step (ring) or hop (tree)
  double bytes_per_s = 0;
};

int ring_steps(int n);                // 2(n-1)
int tree_hops(int n, int nodes = 1);  // 2·((n/nodes − 1) + ceil(log2 nodes)); nodes divides n
// `nodes`: how many nodes the n ranks fill evenly (the tree's shape; the ring ignores it).
double allreduce_seconds(Algorithm a, const AlphaBeta& m, int n, double bytes, int nodes = 1);
AlphaBeta alpha_beta(const Interconnect& link, Algorithm a);
// algbw·2(n-1)/n in bytes/s, from a measured time.
double bus_bandwidth(double bytes, double seconds, int n);

// ---- fitting the model to measurements -------------------------------------

struct Sample {
  double bytes, seconds;
};

// t = a + b·S, by least squares on the relative error Σ((a + b·Sᵢ − tᵢ)/tᵢ)²
// (so 1 KiB counts as much as 256 MiB); a >= 0, b >= 0. For one line over
// all-reduce times, and for each regime of dist/loopback_model.hpp.
struct Line {
  double a = 0, b = 0;
  double at(double bytes) const { return a + b * bytes; }
};
Line fit_line(const std::vector<Sample>& samples);

// ---- a training step ---------------------------------------------------------

// One step of one GPU: its compute (forward and backward, the caller's
// split of the batch), then the all-reduce of the gradients
// (params · bytes_per_grad), once per step.
struct StepPrediction {
  double allreduce_s = 0;        // the better of ring and tree
  Algorithm algorithm = Algorithm::ring;
  double step_no_overlap_s = 0;  // compute + all-reduce
  // forward + max(backward, all-reduce): the exchange hidden behind
  // backward (which it can start during: gradient buckets), never behind the
  // forward, which needs the updated weights. Backward is taken as 2/3 of the
  // compute (two products per forward one); the last bucket's exchange,
  // which nothing can hide, is left out: a bound, not a schedule.
  double step_overlap_s = 0;
  double efficiency_no_overlap = 0, efficiency_overlap = 0;  // compute / step
};
StepPrediction predict_step(const Interconnect& link, int gpus, double gradient_bytes, double compute_s);

}  // namespace warpnet::dist
