#include "dist/cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace warpnet::dist {

namespace {

// NCCL's own alpha-beta tuner, the defaults of NCCL v2.28.3
// (src/graph/tuning.cc, ncclTunerConstantsDefaults), for its "Simple"
// protocol, the one it uses for large messages: a base latency of 8.4 µs per
// call for ring and tree, and per step (ring) or hop (tree) 3.4 µs and 4.0 µs
// over NVLink, 5.7 µs and 4.0 µs over PCIe. (Its low-latency protocols, LL
// and LL128, trade bandwidth for smaller latencies on small messages; not
// modelled here.)
constexpr double kUs = 1e-6;
constexpr double kNcclBase = 8.4 * kUs;
constexpr double kNcclNvlinkRing = 3.4 * kUs, kNcclNvlinkTree = 4.0 * kUs;
constexpr double kNcclPciRing = 5.7 * kUs, kNcclPciTree = 4.0 * kUs;
constexpr const char* kNcclLatency = "latency: NCCL v2.28.3 tuner defaults, Simple protocol (src/graph/tuning.cc)";

}  // namespace

const std::vector<Interconnect>& interconnects() {
  static const std::vector<Interconnect> table = {
      // PCIe 5.0: 32.0 GT/s per lane with 128b/130b encoding (PCI-SIG, PCI
      // Express Base Specification 5.0, 2019): x16 carries 32e9·16·128/130/8
      // = 63.0 GB/s each way. Eight GPUs behind one host's PCIe switches.
      {"pcie5", "PCIe 5.0 x16, GPUs in one host", 32e9 * 16 * 128.0 / 130.0 / 8, kNcclBase, kNcclPciRing,
       kNcclPciTree, 8, std::string("bandwidth: PCI-SIG PCIe 5.0 base specification, 32 GT/s x16; ") + kNcclLatency},
      // NVLink 4: H100 and H200 SXM have 18 links, 900 GB/s per GPU counting
      // both directions (NVIDIA H100 and H200 Tensor Core GPU datasheets;
      // Hopper architecture whitepaper), 450 GB/s each way; an HGX board joins
      // 8 GPUs through NVSwitch.
      {"nvlink4", "NVLink 4 (H100/H200 SXM, HGX 8-GPU NVSwitch)", 450e9, kNcclBase, kNcclNvlinkRing, kNcclNvlinkTree,
       8, std::string("bandwidth: NVIDIA H100/H200 datasheets, NVLink 900 GB/s per GPU (both directions); ") +
              kNcclLatency},
      // NVLink 5: B200 has 1.8 TB/s per GPU counting both directions (NVIDIA
      // HGX B200 / DGX B200 datasheets), 900 GB/s each way; 8 GPUs per HGX.
      {"nvlink5", "NVLink 5 (B200, HGX 8-GPU NVSwitch)", 900e9, kNcclBase, kNcclNvlinkRing, kNcclNvlinkTree, 8,
       std::string("bandwidth: NVIDIA HGX B200 datasheet, NVLink 1.8 TB/s per GPU (both directions); ") +
           kNcclLatency},
      // GB200 NVL72: 72 Blackwell GPUs in one NVLink domain through NVLink
      // switch trays, 1.8 TB/s per GPU, 130 TB/s in all (NVIDIA GB200 NVL72
      // product page): every GPU of the rack is one hop away.
      {"nvl72", "NVLink 5, GB200 NVL72 (72 GPUs, one NVLink domain)", 900e9, kNcclBase, kNcclNvlinkRing,
       kNcclNvlinkTree, 72,
       std::string("bandwidth: NVIDIA GB200 NVL72, 72 GPUs, 1.8 TB/s per GPU, 130 TB/s aggregate; ") + kNcclLatency},
  };
  return table;
}

const Interconnect& interconnect(const std::string& name) {
  std::string names;
  for (const Interconnect& i : interconnects()) {
    if (i.name == name) return i;
    names += (names.empty() ? "" : ", ") + i.name;
  }
  fail("cost model: no interconnect '", name, "' (", names, ")");
}

int ring_steps(int n) { return 2 * (n - 1); }

int tree_hops(int n, int nodes) {
  WN_CHECK(nodes >= 1 && n % nodes == 0, "cost model: ", n, " ranks do not fill ", nodes, " nodes evenly");
  int depth = 0;
  while ((1 << depth) < nodes) ++depth;
  return 2 * ((n / nodes - 1) + depth);
}

double allreduce_seconds(Algorithm a, const AlphaBeta& m, int n, double bytes, int nodes) {
  WN_CHECK(n >= 1, "cost model: ", n, " ranks");
  if (n == 1) return 0;  // nothing to exchange
  if (a == Algorithm::ring)
    return m.alpha0_s + ring_steps(n) * m.alpha_s + 2.0 * (n - 1) / n * bytes / m.bytes_per_s;
  return m.alpha0_s + tree_hops(n, nodes) * m.alpha_s + 2.0 * bytes / m.bytes_per_s;
}

AlphaBeta alpha_beta(const Interconnect& link, Algorithm a) {
  return {link.alpha0_s, a == Algorithm::ring ? link.alpha_ring_s : link.alpha_tree_s, link.bytes_per_s};
}

double bus_bandwidth(double bytes, double seconds, int n) { return bytes / seconds * 2.0 * (n - 1) / n; }

// ---- fitting -------------------------------------------------------------------

Line fit_line(const std::vector<Sample>& samples) {
  WN_CHECK(!samples.empty(), "fit_line: no samples");
  // Weighted least squares with w = 1/t²: minimises Σ (relative error)².
  double sw = 0, sws = 0, swss = 0, swt = 0, swst = 0;
  for (const Sample& s : samples) {
    const double w = 1.0 / (s.seconds * s.seconds);
    sw += w;
    sws += w * s.bytes;
    swss += w * s.bytes * s.bytes;
    swt += w * s.seconds;
    swst += w * s.bytes * s.seconds;
  }
  const double det = sw * swss - sws * sws;
  Line l;
  if (samples.size() >= 2 && det > 0) {
    l.a = (swss * swt - sws * swst) / det;
    l.b = (sw * swst - sws * swt) / det;
  }
  // A negative latency or a negative time per byte means nothing: refit
  // with that term at zero.
  if (samples.size() < 2 || det <= 0 || l.a < 0) l = {0, swss > 0 ? swst / swss : 0};
  if (l.b < 0) l = {swt / sw, 0};
  return l;
}

// ---- a training step -------------------------------------------------------------

StepPrediction predict_step(const Interconnect& link, int gpus, double gradient_bytes, double compute_s) {
  WN_CHECK(gpus >= 1 && gpus <= link.max_gpus, "cost model: ", link.name, " joins at most ", link.max_gpus,
           " GPUs, not ", gpus, " (beyond, a network joins the groups: not modelled)");
  StepPrediction p;
  // Every link of the table joins one node (cost_model.hpp): NCCL's tree is a chain there.
  const double ring = allreduce_seconds(Algorithm::ring, alpha_beta(link, Algorithm::ring), gpus, gradient_bytes);
  const double tree = allreduce_seconds(Algorithm::tree, alpha_beta(link, Algorithm::tree), gpus, gradient_bytes);
  p.algorithm = tree < ring ? Algorithm::tree : Algorithm::ring;
  p.allreduce_s = std::min(ring, tree);
  p.step_no_overlap_s = compute_s + p.allreduce_s;
  const double forward_s = compute_s / 3, backward_s = compute_s - forward_s;
  p.step_overlap_s = forward_s + std::max(backward_s, p.allreduce_s);
  p.efficiency_no_overlap = p.step_no_overlap_s > 0 ? compute_s / p.step_no_overlap_s : 1;
  p.efficiency_overlap = p.step_overlap_s > 0 ? compute_s / p.step_overlap_s : 1;
  return p;
}

}  // namespace warpnet::dist
