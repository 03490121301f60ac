// The alpha-beta all-reduce model (dist/cost_model.hpp) against its
// formulas written out by hand, the fit against data made from known lines,
// and the shards of a global batch. No MPI needed: this suite always runs.
#include <doctest/doctest.h>

#include <cmath>

#include "dist/cost_model.hpp"
#include "nn/data_parallel.hpp"

using namespace warpnet;
using namespace warpnet::dist;

// Approx(..).scale(0) throughout: relative only. doctest's default scale of 1
// adds epsilon as an absolute floor, larger than these microsecond figures.

TEST_CASE("ring and tree all-reduce times follow the alpha-beta formulas") {
  const AlphaBeta m{10e-6, 2e-6, 100e9};
  const double S = 64e6;
  // ring, 2 ranks: α₀ + 2α + 2·(1/2)·S/B
  CHECK(allreduce_seconds(Algorithm::ring, m, 2, S) == doctest::Approx(10e-6 + 2 * 2e-6 + S / 100e9).scale(0));
  // ring, 8 ranks: 14 steps, 2·7/8 of S over each link
  CHECK(allreduce_seconds(Algorithm::ring, m, 8, S) == doctest::Approx(10e-6 + 14 * 2e-6 + 1.75 * S / 100e9).scale(0));
  // tree, 8 ranks on 8 nodes: depth 3 each way, 2S per link
  CHECK(allreduce_seconds(Algorithm::tree, m, 8, S, 8) == doctest::Approx(10e-6 + 6 * 2e-6 + 2 * S / 100e9).scale(0));
  CHECK(ring_steps(72) == 142);
  CHECK(tree_hops(72, 72) == 14);  // one GPU per node: ceil(log2 72) = 7 each way
  CHECK(tree_hops(72, 9) == 22);   // 8 per node: a chain of 7 in the node, then ceil(log2 9) = 4 across
  CHECK(tree_hops(8) == 14);       // one node (NCCL's tuner): a chain of 7 each way
  CHECK(tree_hops(2) == 2);
  CHECK_THROWS(tree_hops(72, 5));
  CHECK(allreduce_seconds(Algorithm::ring, m, 1, S) == 0);
  // With no latency, a ring's bus bandwidth is the link's bandwidth, whatever n.
  const AlphaBeta pure{0, 0, 100e9};
  for (int n : {2, 3, 8, 72})
    CHECK(bus_bandwidth(S, allreduce_seconds(Algorithm::ring, pure, n, S), n) == doctest::Approx(100e9).scale(0));
  // Across nodes tree beats ring on latency (small messages), ring beats tree
  // on bandwidth (8 nodes: ring pays 16 us more latency and saves S/(4B), so
  // from 6.4 MB on). Inside one node, with the same α, the tree's chain has
  // the ring's latency and moves more: the ring wins at every size.
  CHECK(allreduce_seconds(Algorithm::tree, m, 72, 1024, 72) < allreduce_seconds(Algorithm::ring, m, 72, 1024));
  CHECK(allreduce_seconds(Algorithm::ring, m, 8, S) < allreduce_seconds(Algorithm::tree, m, 8, S, 8));
  CHECK(allreduce_seconds(Algorithm::tree, m, 8, 6e6, 8) < allreduce_seconds(Algorithm::ring, m, 8, 6e6));
  for (double bytes : {1024.0, 6e6, S})
    CHECK(allreduce_seconds(Algorithm::ring, m, 8, bytes) < allreduce_seconds(Algorithm::tree, m, 8, bytes));
}

TEST_CASE("the link table holds the published figures") {
  // PCIe 5.0 x16: 32 GT/s · 16 lanes · 128/130 / 8 bits = 63.0 GB/s each way.
  CHECK(interconnect("pcie5").bytes_per_s == doctest::Approx(63.015e9).scale(0).epsilon(1e-4));
  CHECK(interconnect("nvlink4").bytes_per_s == 450e9);  // 900 GB/s per GPU, both ways
  CHECK(interconnect("nvlink5").bytes_per_s == 900e9);  // 1.8 TB/s per GPU, both ways
  CHECK(interconnect("nvl72").max_gpus == 72);
  CHECK(interconnect("nvl72").bytes_per_s * 2 * 72 == doctest::Approx(130e12).scale(0).epsilon(0.01));  // "130 TB/s"
  // NCCL 2.28 tuner, NVLink ring Simple
  CHECK(interconnect("nvlink4").alpha_ring_s == doctest::Approx(3.4e-6).scale(0));
  CHECK_THROWS(interconnect("infiniband"));
}

TEST_CASE("fitting recovers the line the samples were made from") {
  std::vector<Sample> one;
  for (double s = 1024; s <= 1 << 28; s *= 2) one.push_back({s, 3e-6 + s / 5e9});
  const Line l = fit_line(one);
  CHECK(l.a == doctest::Approx(3e-6).scale(0).epsilon(1e-9));
  CHECK(l.b == doctest::Approx(1 / 5e9).scale(0).epsilon(1e-9));
}

TEST_CASE("a step's efficiency is compute over compute plus the exposed all-reduce") {
  const Interconnect& link = interconnect("nvlink4");
  const double bytes = 2e9;  // 1e9 bf16 gradients
  const StepPrediction p = predict_step(link, 8, bytes, 0.5);
  const double ring = 8.4e-6 + 14 * 3.4e-6 + 1.75 * bytes / 450e9;
  CHECK(p.algorithm == Algorithm::ring);
  CHECK(p.allreduce_s == doctest::Approx(ring).scale(0));
  CHECK(p.efficiency_no_overlap == doctest::Approx(0.5 / (0.5 + ring)).scale(0));
  CHECK(p.efficiency_overlap == doctest::Approx(1.0).scale(0));  // 7.8 ms behind a backward of 333 ms
  // An all-reduce longer than backward shows past it; the forward hides none of it.
  const StepPrediction slow = predict_step(interconnect("pcie5"), 8, bytes, 0.03);
  CHECK(slow.step_overlap_s == doctest::Approx(0.01 + slow.allreduce_s).scale(0));
  CHECK_THROWS(predict_step(link, 16, bytes, 0.5));  // one HGX board joins 8
  // Inside one NVLink domain NCCL's tree is a chain, so the ring is chosen at
  // any size, even LeNet-5's 241 KiB over 72 GPUs.
  for (double b : {1024.0, 241e3, 2e9})
    CHECK(predict_step(interconnect("nvl72"), 72, b, 0.1).algorithm == Algorithm::ring);
}

TEST_CASE("shards of a global batch are contiguous, in rank order, and differ by at most one row") {
  for (int ranks : {1, 2, 3, 7})
    for (int64_t global : {1, 2, 3, 5, 63, 64, 100}) {
      int64_t next = 0;
      for (int r = 0; r < ranks; ++r) {
        const nn::Shard s = nn::shard_of(global, r, ranks);
        CHECK(s.begin == next);
        CHECK((s.size() == global / ranks || s.size() == global / ranks + 1));
        next = s.end;
      }
      CHECK(next == global);
    }
}
