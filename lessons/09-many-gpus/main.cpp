// Lesson 09: many GPUs. When one GPU is not enough, data-parallel training
// puts a copy of the model on each and adds up their gradients every step
// (all-reduce); this chapter shows, from dist/cost_model.hpp, when that
// communication starts to cost more than the GPUs it adds save:
//   1. compute time per step against all-reduce time as GPUs grow, for
//      LeNet-5, mini-AlexNet, a 1e9- and a 7e10-parameter model
//   2. data against model (tensor, pipeline) parallelism: memory per GPU
//   3. ring all-reduce step by step: a simulation of 4 ranks that prints
//      every step of the reduce-scatter and the all-gather
//   4. NVLink, NVSwitch and an NVL72 rack: the links the model knows
//   5. when adding GPUs stops paying: scaling efficiency per interconnect
//   6. measured here: the loopback all-reduce and the 2-rank training speed
//      from the committed records (bench/results/), with machine and date
// Every claim is checked; the program exits 1 when one fails.
//
//   build/bin/lesson09             # the whole chapter (well under a second)
//   build/bin/lesson09 --quick     # the same; what `ctest -R lesson09` runs
//   build/bin/lesson09 --markdown  # only part 5's table, as the README holds it
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "device/datasheet.hpp"
#include "dist/cost_model.hpp"
#include "lessons/bench_records.hpp"
#include "lessons/lesson_args.hpp"
#include "lessons/lesson_checks.hpp"
#include "nn/models.hpp"
#include "ring_simulation.hpp"

using namespace warpnet;

namespace {

using lesson::expect;

// ---- the models ------------------------------------------------------------------

// Assumptions, not measurements (no GPU has run this chapter): an H200's
// dense BF16 peak (DESIGN.md, "Measuring") and the share of it a large
// training run is assumed to sustain.
constexpr double kH200Bf16 = device::datasheet::h200::kBf16Flops;
constexpr double kAssumedUtilisation = 0.4;
constexpr double kH200MemoryBytes = device::datasheet::h200::kMemoryBytes;  // HBM3e per H200

struct Workload {
  std::string name;
  double params;
  double gradient_bytes_per_param;  // f32 for warpnet's CNNs, bf16 for the large ones
  double step_flops;                // forward + backward of one global batch
  std::string batch;
};

// Forward FLOPs from the layers' own cost formulas; backward is twice the
// forward (one product for the input's gradient, one for the weights').
Workload cnn(const std::string& name, const std::string& shown, int64_t batch) {
  auto model = nn::make_model(name, Shape({1, 28, 28}), 10, 1);
  const double forward = model->cost(Shape({batch, 1, 28, 28})).flops;
  return {shown, double(model->parameter_count()), 4, 3 * forward, cat(batch, " images")};
}

// A transformer's training step costs about 6 FLOPs per parameter and token
// (2 forward, 4 backward; Kaplan et al., "Scaling Laws for Neural Language
// Models", 2020).
Workload transformer(const std::string& name, double params, double tokens) {
  return {name, params, 2, 6 * params * tokens, tokens >= (1 << 20) ? cat(tokens / (1 << 20), "Mi tokens") : cat(tokens / 1024, "Ki tokens")};
}

std::vector<Workload> workloads() {
  return {cnn("lenet5", "LeNet-5", 64), cnn("alexnet", "mini-AlexNet", 64),
          transformer("1e9 parameters", 1e9, 1 << 20), transformer("7e10 parameters", 7e10, 1 << 22)};
}

// Strong scaling: a fixed global batch split over `gpus`; the link that
// joins that many (NVLink 4 up to 8, the NVL72 rack beyond).
const dist::Interconnect& link_for(int gpus) { return dist::interconnect(gpus <= 8 ? "nvlink4" : "nvl72"); }

dist::StepPrediction step(const Workload& w, const dist::Interconnect& link, int gpus) {
  const double compute = w.step_flops / (gpus * kH200Bf16 * kAssumedUtilisation);
  return dist::predict_step(link, gpus, w.params * w.gradient_bytes_per_param, compute);
}

std::string time_text(double s) {
  char buf[32];
  if (s >= 1) std::snprintf(buf, sizeof buf, "%.2f s", s);
  else if (s >= 1e-3) std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
  return buf;
}

// ---- 1 ---------------------------------------------------------------------------

void part1_bottleneck() {
  std::printf("\n1. Compute per step against the all-reduce of the gradients (a fixed global batch split over the "
              "GPUs;\n   compute at an assumed %.0f%% of an H200's %.0f TFLOP/s BF16; NVLink 4 up to 8 GPUs, NVL72 "
              "beyond)\n\n",
              100 * kAssumedUtilisation, kH200Bf16 / 1e12);
  std::printf("  %-16s %12s %12s %5s %12s %12s %8s\n", "model", "parameters", "batch", "GPUs", "compute", "all-reduce",
              "comm.");
  for (const Workload& w : workloads()) {
    double previous_share = -1;
    for (int gpus : {2, 8, 72}) {
      const dist::StepPrediction p = step(w, link_for(gpus), gpus);
      const double compute = p.step_no_overlap_s - p.allreduce_s;
      const double share = p.allreduce_s / p.step_no_overlap_s;
      std::printf("  %-16s %12.3g %12s %5d %12s %12s %7.1f%%\n", w.name.c_str(), w.params, w.batch.c_str(), gpus,
                  time_text(compute).c_str(), time_text(p.allreduce_s).c_str(), 100 * share);
      expect(share > previous_share, cat(w.name, ": communication's share grows with the GPUs"));
      previous_share = share;
    }
  }
  std::printf("\n  Each GPU's compute shrinks as 1/n; the all-reduce does not shrink (a ring moves 2(n-1)/n of the\n"
              "  gradients over each link, which tends to 2x), so its share grows with n. The small CNNs are all\n"
              "  communication: their whole step is microseconds of arithmetic (and, on a real GPU, kernel launches\n"
              "  this ignores).\n");
}

// ---- 2 ---------------------------------------------------------------------------

void part2_data_vs_model() {
  // Mixed-precision Adam keeps 16 bytes per parameter: bf16 weights (2) and
  // gradients (2), an f32 master copy (4), and Adam's two f32 moments (8).
  constexpr double kWeights = 2, kGradients = 2, kOptimizer = 12;
  const double params = 7e10;
  std::printf("\n2. Data against model parallelism: a 7e10-parameter model, mixed-precision Adam (16 bytes per "
              "parameter:\n   bf16 weights and gradients, f32 master weights and two moments), on H200s of %.1f GiB "
              "(%.0f GB)\n\n",
              kH200MemoryBytes / double(1 << 30), kH200MemoryBytes / 1e9);
  // Bytes per parameter one GPU holds: the model split `split` ways (tensor
  // x pipeline), and whichever of the three kinds of state are sharded over
  // `shards` data-parallel ranks (ZeRO's stages; FSDP is stage 3).
  struct Layout {
    const char* name;
    int split, shards;
    bool shard_optimizer, shard_gradients, shard_weights;
    const char* traffic;
  };
  const Layout layouts[] = {
      {"data parallel (whole model per GPU)", 1, 1, false, false, false,
       "all-reduce of all gradients, once per step"},
      {"ZeRO-1 over 8 (optimizer state sharded)", 1, 8, true, false, false,
       "reduce-scatter of gradients, all-gather of weights: an all-reduce's bytes"},
      {"ZeRO-2 over 8 (and gradients)", 1, 8, true, true, false, "the same"},
      {"ZeRO-3 / FSDP over 8 (and weights)", 1, 8, true, true, true,
       "each layer's weights all-gathered forward and backward: 1.5x"},
      {"ZeRO-3 / FSDP over 64", 1, 64, true, true, true, "the same, over 64"},
      {"tensor parallel 8 (each layer's matrices split 8 ways)", 8, 1, false, false, false,
       "all-reduce of activations inside every layer, forward and backward"},
      {"tensor 8 x pipeline 2 (layers in 2 stages)", 16, 1, false, false, false,
       "the above, plus activations between the stages"},
  };
  std::printf("  %-56s %12s %5s  %s\n", "layout", "GB per GPU", "fits", "what moves between GPUs");
  for (const Layout& l : layouts) {
    const auto share = [&](double b, bool sharded) { return sharded ? b / l.shards : b; };
    const double per_param = share(kWeights, l.shard_weights) + share(kGradients, l.shard_gradients) +
                             share(kOptimizer, l.shard_optimizer);
    const double bytes = params * per_param / l.split;
    const bool fits = bytes < kH200MemoryBytes;  // before any activation
    // Under a tenth of the memory left is no room for the activations, the
    // CUDA context and the communication buffers: "tight".
    const bool roomy = bytes < 0.9 * kH200MemoryBytes;
    std::printf("  %-56s %12.0f %5s  %s\n", l.name, bytes / 1e9, roomy ? "yes" : fits ? "tight" : "no", l.traffic);
    if (l.split == 1 && l.shards == 1)
      expect(!fits, "data parallelism alone cannot hold 7e10 parameters' training state on one H200");
    if (l.split == 16) expect(roomy, "tensor 8 x pipeline 2 brings it well under an H200's memory");
    if (l.shards == 8 && !l.shard_weights) expect(!fits, "sharding optimizer state and gradients over 8 is not enough");
    if (l.shards == 64) expect(roomy, "FSDP over 64 GPUs leaves room: no layer split at all");
  }
  std::printf("\n  Data parallelism copies the model and splits the batch: simple, and its one all-reduce per step\n"
              "  can overlap backward. Sharded data parallelism (ZeRO, PyTorch's FSDP) keeps it so, and splits the\n"
              "  training state instead: each rank keeps 1/n of it and gathers a layer's weights just before using\n"
              "  them, paying half again the all-reduce's bytes. Model parallelism splits the model itself: tensor\n"
              "  parallelism needs the fastest links (it talks inside every layer, so it stays within an NVLink\n"
              "  domain), pipeline parallelism talks less but leaves GPUs idle while the pipeline fills. Large runs\n"
              "  combine them.\n");
}

// ---- 3 ---------------------------------------------------------------------------

void part3_ring() {
  std::printf("\n3. Ring all-reduce step by step: 4 ranks, 8 values each, 4 chunks of 2\n");
  const lesson::RingResult r = lesson::simulate_ring(4, 2, /*print=*/true);
  expect(r.matches_direct_sum, "every rank ends with the direct sum of all ranks' vectors");
  expect(r.steps == 2 * (4 - 1), "the ring takes 2(n-1) = 6 steps");
  // Each rank sends one chunk (S/n) per step: 2(n-1)/n · S in all.
  expect(r.values_sent_per_rank == 2 * (4 - 1) * 8 / 4, "each rank sends 2(n-1)/n of its vector: 12 of 8 values");
  std::printf("\n  Every rank sent %d values for a vector of 8 (2(n-1)/n = 1.5 times its size at n = 4, under 2 for\n"
              "  any n: the ring uses every link all the time), and the result matches the direct sum.\n",
              r.values_sent_per_rank);
}

// ---- 4 ---------------------------------------------------------------------------

void part4_links() {
  std::printf("\n4. The links the cost model knows (dist/cost_model.cpp, with sources)\n\n");
  std::printf("  %-8s %-52s %14s %6s\n", "name", "what", "GB/s each way", "GPUs");
  for (const dist::Interconnect& l : dist::interconnects())
    std::printf("  %-8s %-52s %14.0f %6d\n", l.name.c_str(), l.description.c_str(), l.bytes_per_s / 1e9, l.max_gpus);
  const dist::Interconnect& nv4 = dist::interconnect("nvlink4");
  const dist::Interconnect& pcie = dist::interconnect("pcie5");
  expect(nv4.bytes_per_s > 7 * pcie.bytes_per_s, "NVLink 4 gives a GPU over 7x the bandwidth of PCIe 5 x16");
  const double grads = 2e9;  // 1e9 bf16 gradients
  const double t8 = dist::predict_step(nv4, 8, grads, 0).allreduce_s;
  const double t72 = dist::predict_step(dist::interconnect("nvl72"), 72, grads, 0).allreduce_s;
  std::printf("\n  NVSwitch chips join every GPU of a board (8) to every other at full NVLink bandwidth; an NVL72 rack's\n"
              "  NVLink switch trays do the same for 72 GPUs, so the rack is one domain: any GPU reaches any other's\n"
              "  memory in one hop, and a ring over 72 GPUs runs at NVLink speed. All-reduce of 1e9 bf16 gradients:\n"
              "  %s on 8 H200s (NVLink 4), %s on 72 GPUs of an NVL72 — nine times the GPUs, less time, because\n"
              "  each link carries at most 2x the gradients whatever n is, and NVLink 5 doubles the bandwidth.\n",
              time_text(t8).c_str(), time_text(t72).c_str());
  expect(t72 < t8, "72 GPUs on NVLink 5 all-reduce 2 GB faster than 8 on NVLink 4");
}

// ---- 5 ---------------------------------------------------------------------------

// Part 5's case: the 1e9 model with a smaller global batch than part 1's,
// 2^16 tokens, so that the GPUs' share of it becomes small within 72 GPUs.
Workload part5_workload() { return transformer("1e9 parameters", 1e9, 1 << 16); }

// Strong-scaling efficiency (speed-up / n) per link.
void part5_table(bool markdown) {
  const Workload w = part5_workload();
  const std::vector<int> gpu_counts = {2, 4, 8, 16, 32, 72};
  if (markdown) {
    std::printf("| link | GPUs | compute per GPU | all-reduce | efficiency, serial | efficiency, overlapped |\n"
                "|---|---:|---:|---:|---:|---:|\n");
  } else {
    std::printf("\n5. When adding GPUs stops paying: the %s model, global batch %s, per link\n"
                "   (efficiency = speed-up / GPUs; serial: the all-reduce after backward; overlapped: hidden behind "
                "it)\n\n  %-8s %5s %14s %12s %9s %11s\n",
                w.name.c_str(), w.batch.c_str(), "link", "GPUs", "compute/GPU", "all-reduce", "serial", "overlapped");
  }
  for (const dist::Interconnect& link : dist::interconnects()) {
    double previous = 2;
    for (int gpus : gpu_counts) {
      if (gpus > link.max_gpus) continue;
      const dist::StepPrediction p = step(w, link, gpus);
      const double compute = p.step_no_overlap_s - p.allreduce_s;
      if (markdown)
        std::printf("| %s | %d | %s | %s | %.0f%% | %.0f%% |\n", link.name.c_str(), gpus, time_text(compute).c_str(),
                    time_text(p.allreduce_s).c_str(), 100 * p.efficiency_no_overlap, 100 * p.efficiency_overlap);
      else
        std::printf("  %-8s %5d %14s %12s %8.0f%% %10.0f%%\n", link.name.c_str(), gpus, time_text(compute).c_str(),
                    time_text(p.allreduce_s).c_str(), 100 * p.efficiency_no_overlap, 100 * p.efficiency_overlap);
      expect(p.efficiency_no_overlap < previous, cat(link.name, ": efficiency falls as GPUs are added"));
      expect(p.efficiency_overlap >= p.efficiency_no_overlap, "overlap never hurts");
      previous = p.efficiency_no_overlap;
    }
  }
  if (markdown)
    std::printf("\nComputed by `build/bin/lesson09 --markdown` from `dist/cost_model.hpp` (peak link bandwidth, "
                "NCCL's latencies; compute at an assumed %.0f%% of an H200's BF16 peak): a prediction, not a "
                "measurement.\n",
                100 * kAssumedUtilisation);
}

void part5_discussion() {
  const Workload w = part5_workload();
  const double pcie8 = step(w, dist::interconnect("pcie5"), 8).efficiency_no_overlap;
  const double nv8 = step(w, dist::interconnect("nvlink4"), 8).efficiency_no_overlap;
  expect(nv8 > pcie8, "at 8 GPUs NVLink 4 keeps more of each GPU busy than PCIe 5");
  std::printf("\n  At 8 GPUs, %.0f%% efficiency on PCIe 5 against %.0f%% on NVLink 4 (serial). Adding GPUs stops\n"
              "  paying when the all-reduce, which does not shrink, outgrows the compute, which does: then a larger\n"
              "  global batch (more compute per step), overlap, lower-precision gradients or a faster link help;\n"
              "  more GPUs do not.\n",
              100 * pcie8, 100 * nv8);
}

// ---- 6 ---------------------------------------------------------------------------

// A record's text field, or "?" when it is missing or not text.
std::string text(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "?";
}

void part6_measured() {
  std::printf("\n6. Measured on this machine (records in bench/results/; a 2-core VM has no GPU, so MPI between two\n"
              "   processes through shared memory stands in for the link)\n");
  using lesson::field;
  bool allreduce = false;
  lesson::show_each_record([&](const lesson::BenchRecord& r) {
    const nlohmann::json& j = r.json;
    if (text(j, "benchmark") != "warpnet bench allreduce" || !j.contains("rows")) return;
    allreduce = true;
    std::printf("\n  %s: %s (%s), %s, %d ranks, %s\n", r.file.filename().string().c_str(),
                text(j, "machine").c_str(), text(j, "cpu").c_str(), text(j, "date").c_str(), j.value("ranks", 0),
                text(j, "mpi").c_str());
    std::printf("  %12s %12s %12s %12s\n", "bytes", "measured", "predicted", "busbw GB/s");
    for (const nlohmann::json& row : field(j, "rows")) {
      const double bytes = row.value("bytes", 0.0);
      if (bytes != 1024 && bytes != 65536 && bytes != 1 << 20 && bytes != 16 << 20 && bytes != 256 << 20) continue;
      std::printf("  %12.0f %12s %12s %12.2f\n", bytes, time_text(row.value("median_s", 0.0)).c_str(),
                  row.contains("predicted_s") ? time_text(row["predicted_s"].get<double>()).c_str() : "-",
                  row.value("busbw_bytes_per_s", 0.0) / 1e9);
      expect(text(row, "check") == "ok", "the recorded all-reduce summed correctly");
    }
    if (j.contains("model") && j.contains("fit"))
      std::printf("  the loopback model (dist/loopback_model.hpp), calibrated on the pieces, within 25%% at %d of "
                  "%d sizes\n",
                  field(j, "model").value("within_25_percent", 0), field(j, "fit").value("sizes", 0));
    const nlohmann::json& repeats = field(j, "repeats");
    if (repeats.is_array() && !repeats.empty()) {
      // scripts/allreduce-repeats.sh: the same command run several times in a row.
      const int sizes = field(j, "fit").value("sizes", 0);
      int all = 0, fewest = sizes;
      double worst = 0;
      for (const nlohmann::json& run : repeats) {
        const int within = run.value("within_25_percent", 0);
        all += within == sizes;
        fewest = std::min(fewest, within);
        worst = std::max(worst, run.value("worst_error", 0.0));
      }
      std::printf("  over %zu runs in a row: within 25%% at all %d sizes in %d run%s, at %d or more in every run "
                  "(worst %.0f%%)\n",
                  repeats.size(), sizes, all, all == 1 ? "" : "s", fewest, 100 * worst);
      // Each size predicted by the model calibrated without its own pieces:
      // sizes it never saw (recorded from 2026-12-02 on).
      int held_least = sizes, held_most = -1;
      for (const nlohmann::json& run : repeats) {
        const nlohmann::json& held = field(run, "held_out_within_25_percent");
        if (!held.is_number()) continue;
        held_least = std::min(held_least, held.get<int>());
        held_most = std::max(held_most, held.get<int>());
      }
      if (held_most >= 0)
        std::printf("  each size predicted with its own pieces left out (a size the model never saw): within 25%% "
                    "at %d to %d of %d sizes\n",
                    held_least, held_most, sizes);
    }
  });
  if (!allreduce) std::printf("  (no all-reduce record)\n");
  lesson::show_each_record([&](const lesson::BenchRecord& r) {
    const nlohmann::json& j = r.json;
    if (!field(j, "runs").is_array() || text(j, "benchmark").find("data-parallel") == std::string::npos) return;
    const nlohmann::json& machine = field(j, "machine");
    std::printf("\n  %s: %s (%s), %s\n", r.file.filename().string().c_str(), text(j, "machine_text").c_str(),
                text(machine, "cpu").c_str(), text(machine, "date").c_str());
    for (const nlohmann::json& run : field(j, "runs")) {
      std::string rates;
      for (const nlohmann::json& v : field(run, "images_per_s"))
        rates += cat(rates.empty() ? "" : ", ", std::lround(v.get<double>()));
      std::printf("  %-52s %s images/s\n", text(run, "run").c_str(), rates.c_str());
    }
    if (j.contains("speedup"))
      std::printf("  2 ranks x 1 thread: %.2fx one process with 1 thread, %.2fx one process with 2 threads\n",
                  field(j, "speedup").value("vs_1_process_1_thread", 0.0),
                  field(j, "speedup").value("vs_1_process_2_threads", 0.0));
  });
}

}  // namespace

int main(int argc, char** argv) {
  // --quick changes nothing: the chapter is fast.
  const std::optional<lesson::Mode> mode = lesson::parse_mode(argc, argv, "part 5's table only");
  if (!mode) return 2;
  if (mode->markdown) {
    part5_table(true);
    return lesson::failures() == 0 ? 0 : 1;
  }
  try {
    std::printf("Lesson 09: many GPUs\n");
    part1_bottleneck();
    part2_data_vs_model();
    part3_ring();
    part4_links();
    part5_table(false);
    part5_discussion();
    part6_measured();
    std::printf("\n");
    return lesson::finish_checks();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lesson09: %s\n", e.what());
    return 1;
  }
}
