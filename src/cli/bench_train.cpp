// `warpnet bench train`: training throughput, images per second, of one
// model on the CPU (Eigen) and on the GPU (warpnet's best kernels, each step
// replayed from a CUDA graph where the model allows, without one, and with
// each bias add and ReLU as two kernels), and the speed-ups, measured in one
// run; beside them the launch floor (device/launch_floor.hpp): what as many
// launches as the graphed step's nodes cost when their kernels do next to
// nothing. Two passes (bench_train, then bench_train_beyond): the
// measurements already made on a GPU first, at every batch size, then the
// fused step and the launch floor, so one of those failing or hanging on a
// GPU loses none of the first.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include "cli/bench.hpp"
#include "core/stats.hpp"
#include "cpu/ops.hpp"
#include "device/backend.hpp"
#include "device/cuda/gpu.hpp"
#include "device/launch_floor.hpp"
#include "datasets/synthetic.hpp"
#include "nn/trainer.hpp"

namespace warpnet::cli::bench {

namespace {

// Fashion-MNIST's training set: what an epoch is.
constexpr int64_t kEpochImages = 60000;

// Timed epochs after the first (which pays for warm-up: allocations,
// library handles, caches, a graph's capture): the median is the rate, the
// others show the spread. An epoch shorter than --epoch-seconds (1 s; a GPU's
// epoch of 8192 images takes tens of ms) is timed in groups instead: the run
// is made again with each timed "epoch" a group of k epochs lasting about that,
// whose rate is its images over its seconds, so that clock ramps, a stray
// process or one slow step move the rate less.
constexpr int kTimedEpochs = 3;

// 1 + kTimedEpochs groups of `group` epochs over `images` 28x28 images with
// SGD: each group's images per second.
struct Timed {
  std::vector<double> rates, seconds;
  int graph_nodes = 0;
  std::string graph_note;
};
// How a GPU run trains, beside the device: nn::TrainOptions' graph,
// fold_bias_relu, fused_step and programmatic_launches.
struct Variant {
  nn::TrainOptions::Graph graph = nn::TrainOptions::Graph::off;
  bool fold = true;
  bool fused = false;
  bool programmatic = false;
};

Timed time_epochs(const TrainSettings& t, Device device, uint64_t seed, const Variant& v, int group) {
  // The pixel values do not change the time a step takes: synthetic images
  // of Fashion-MNIST's shape keep the bench free of the data set.
  const data::Dataset train = data::make_squares(t.images, 10, 28, seed), none;
  nn::TrainOptions o;
  o.model = t.model;
  o.batch_size = t.batch;
  o.epochs = group * (1 + kTimedEpochs);
  o.optimizer = "sgd";
  o.lr = 0.01;
  o.seed = seed;
  o.device = device;
  o.graph = v.graph;
  o.fold_bias_relu = v.fold;
  o.fused_step = v.fused;
  o.programmatic_launches = v.programmatic;
  nn::Trainer trainer(o, train, none);
  const std::vector<nn::EpochStats> epochs = trainer.run();
  Timed timed;
  for (size_t first = size_t(group); first + size_t(group) <= epochs.size(); first += size_t(group)) {
    double seconds = 0;
    for (size_t e = first; e < first + size_t(group); ++e) seconds += epochs[e].seconds;
    timed.seconds.push_back(seconds);
    timed.rates.push_back(double(group) * double(t.images) / seconds);
  }
  if (device != Device::cpu) {
    timed.graph_nodes = trainer.graphed_step() ? int(trainer.graphed_step()->nodes()) : 0;
    timed.graph_note = trainer.graph_note();
  }
  return timed;
}

nlohmann::json train_rate(const TrainSettings& t, Device device, uint64_t seed, const Variant& v = {}) {
  try {
    Timed timed = time_epochs(t, device, seed, v, 1);
    int group = 1;
    if (const double epoch = median(timed.seconds); epoch < t.min_timed_seconds) {
      group = std::max(2, int(std::ceil(t.min_timed_seconds / std::max(epoch, 1e-6))));
      timed = time_epochs(t, device, seed, v, group);
    }
    const double rate = median(timed.rates);
    nlohmann::json r = {{"images_per_second", rate},
                        {"images_per_second_of_each_epoch", timed.rates},
                        {"seconds", median(timed.seconds)},
                        {"images", t.images},
                        {"epochs_per_timing", group},
                        {"epoch_seconds_computed", double(kEpochImages) / rate}};
    if (group > 1)
      r["note"] = cat("epochs of ", t.images, " images took under ", t.min_timed_seconds,
                      " s: each rate (and each of images_per_second_of_each_epoch and seconds) is a group of ", group,
                      " epochs (run again with ", group, " times the epochs, the first group untimed)");
    if (device != Device::cpu) {
      r["graph_nodes"] = timed.graph_nodes;
      if (!timed.graph_note.empty()) r["graph_none_because"] = timed.graph_note;
    }
    return r;
  } catch (const std::exception& e) {
    return {{"error", e.what()}};
  }
}

// device::launch_floor on the GPU at `nodes` launches (a step's graph
// nodes; none: nothing to compare), beside the graphed step's time.
nlohmann::json launch_floor_of(int nodes, int64_t batch) {
  if (nodes <= 0) return {{"skipped", "the step was not captured in a graph"}};
  try {
    // 200 chains are thousands of launches, none of them the workload a
    // profiler of `bench train` is after (scripts/gpu-check.sh's ncu phase).
    const device::gpu::ProfilerPause paused;
    const device::LaunchFloor f = device::launch_floor(Device::cuda, nodes, 200);
    nlohmann::json programmatic = {{"programmatic_graph_us", f.programmatic_graph_us},
                                   {"programmatic_graph_us_per_launch", f.programmatic_graph_us / nodes}};
    if (!f.programmatic_error.empty()) programmatic = {{"programmatic_error", f.programmatic_error}};
    nlohmann::json floor = {
        {"launches", f.launches},
        {"graph_nodes", int64_t(f.graph_nodes)},
        {"graph_us", f.graph_us},
        {"graph_us_per_launch", f.graph_us / nodes},
        {"eager_us", f.eager_us},
        {"eager_us_per_launch", f.eager_us / nodes},
        {"batch_size", batch},
        {"what", cat("a chain of ", nodes, " ReLUs over 32 floats, each reading the last one's output, captured in one "
                     "graph and replayed (ordered, and as programmatic dependent launches), and launched one by one; "
                     "wall clock over 200 chains")}};
    floor.update(programmatic);
    return floor;
  } catch (const std::exception& e) {
    return {{"error", e.what()}};
  }
}

// One line for each of `wheres` that rec has: its rate, or why it has none.
void print_rates(const nlohmann::json& rec, std::initializer_list<const char*> wheres) {
  for (const char* where : wheres) {
    if (!rec.contains(where)) continue;
    const nlohmann::json& r = rec[where];
    if (r.contains("images_per_second")) {
      const std::vector<double> each = r["images_per_second_of_each_epoch"].get<std::vector<double>>();
      std::printf("  %-22s %10.0f images/s (epochs: %.0f to %.0f)   a %lld-image epoch in %.1f s (computed from the "
                  "rate)\n",
                  where, r["images_per_second"].get<double>(), *std::min_element(each.begin(), each.end()),
                  *std::max_element(each.begin(), each.end()), (long long)kEpochImages,
                  r["epoch_seconds_computed"].get<double>());
      if (r.contains("note")) std::printf("  %-22s %s\n", "", r["note"].get<std::string>().c_str());
    }
    else
      std::printf("  %-22s %s\n", where, r.contains("skipped") ? ("skipped: " + r["skipped"].get<std::string>()).c_str()
                                                          : ("failed: " + r.value("error", std::string("?"))).c_str());
  }
}

double rate_of(const nlohmann::json& rec, const char* where) {
  return rec.contains(where) ? rec[where].value("images_per_second", 0.0) : 0.0;
}

}  // namespace

nlohmann::json bench_train(const TrainSettings& t, const Settings& s, const device::gpu::Info& info) {
  cpu::set_num_threads(s.threads);
  nlohmann::json rec = {{"op", "train"},
                        {"model", t.model},
                        {"batch_size", t.batch},
                        {"optimizer", "sgd"},
                        {"timing", cat("the median of ", kTimedEpochs, " epochs over the images after a first, untimed "
                                       "one (of groups of epochs lasting at least ", t.min_timed_seconds,
                                       " s each where one epoch is shorter: epochs_per_timing); wall clock, "
                                       "evaluation excluded")}};
  std::printf("\ntrain %s, batch %lld, %lld synthetic 28x28 images per epoch\n", t.model.c_str(), (long long)t.batch,
              (long long)t.images);
  rec["cpu"] = train_rate(t, Device::cpu, s.seed);
  rec["cpu"]["threads"] = cpu::num_threads();
  if (!info.usable) {
    rec["gpu"] = {{"skipped", info.why_not}};
  } else {
    // "gpu" is how `warpnet train --device cuda` trains (a graph where the
    // model allows); "gpu_no_graph" launches every kernel from the host.
    using Graph = nn::TrainOptions::Graph;
    rec["gpu"] = train_rate(t, Device::cuda, s.seed, {.graph = Graph::when_possible});
    rec["gpu_no_graph"] = train_rate(t, Device::cuda, s.seed, {.graph = Graph::off});
    // And with each bias add and ReLU as two kernels (TrainOptions::fold_bias_relu off).
    rec["gpu_no_fold"] = train_rate(t, Device::cuda, s.seed, {.graph = Graph::when_possible, .fold = false});
    // Tuned in the first GPU run's first epoch, outside both timed epochs.
    const device::TuningLog tuned = device::kernels_tuned();
    rec["kernels_tuned"] = {{"seconds", tuned.seconds}, {"sizes", tuned.lines}};
  }
  const double cpu_rate = rate_of(rec, "cpu"), gpu_rate = rate_of(rec, "gpu"), eager_rate = rate_of(rec, "gpu_no_graph");
  if (cpu_rate > 0 && gpu_rate > 0) rec["gpu_speedup_over_cpu"] = gpu_rate / cpu_rate;
  if (gpu_rate > 0 && eager_rate > 0 && rec["gpu"].value("graph_nodes", 0) > 0)
    rec["graph_speedup"] = gpu_rate / eager_rate;
  if (const double unfolded_rate = rate_of(rec, "gpu_no_fold"); gpu_rate > 0 && unfolded_rate > 0)
    rec["fold_speedup"] = gpu_rate / unfolded_rate;

  print_rates(rec, {"cpu", "gpu", "gpu_no_graph", "gpu_no_fold"});
  if (rec.contains("gpu_speedup_over_cpu"))
    std::printf("  GPU over CPU: %.1fx\n", rec["gpu_speedup_over_cpu"].get<double>());
  if (rec.contains("fold_speedup"))
    std::printf("  GPU with each bias + ReLU in one kernel over two: %.2fx\n", rec["fold_speedup"].get<double>());
  if (rec.contains("graph_speedup"))
    std::printf("  GPU with a graph over without: %.2fx (%d nodes per step)\n", rec["graph_speedup"].get<double>(),
                rec["gpu"]["graph_nodes"].get<int>());
  std::fflush(stdout);  // a later measurement that hangs, killed by a time limit, leaves this in the log
  return rec;
}

void bench_train_beyond(nlohmann::json& rec, const TrainSettings& t, const Settings& s,
                        const device::gpu::Info& info) {
  if (!info.usable) return;
  cpu::set_num_threads(s.threads);
  std::printf("\ntrain %s, batch %lld: the fused step and the launch floor\n", t.model.c_str(), (long long)t.batch);
  // LeNet-5's fused step (`train --fused-step`): forward, loss and
  // backward in two kernels (kernels/lenet5/); and the same captured as
  // programmatic dependent launches (`--programmatic`), where each of its
  // five kernels waits inside for the one before.
  using Graph = nn::TrainOptions::Graph;
  if (t.model == "lenet5") {
    rec["gpu_fused"] = train_rate(t, Device::cuda, s.seed, {.graph = Graph::on, .fused = true});
    rec["gpu_fused_programmatic"] =
        train_rate(t, Device::cuda, s.seed, {.graph = Graph::on, .fused = true, .programmatic = true});
  }
  // The floor under the graphed step: as many launches of a kernel that
  // does next to nothing as the step's graph has nodes.
  const int nodes = rec.contains("gpu") ? rec["gpu"].value("graph_nodes", 0) : 0;
  rec["launch_floor"] = rec.contains("gpu") && rec["gpu"].contains("error")
                            ? nlohmann::json{{"skipped", "the layers' GPU step failed (\"gpu\")"}}
                            : launch_floor_of(nodes, t.batch);

  const double cpu_rate = rate_of(rec, "cpu"), gpu_rate = rate_of(rec, "gpu");
  for (const char* fused : {"gpu_fused", "gpu_fused_programmatic"})
    if (const double rate = rate_of(rec, fused); cpu_rate > 0 && rate > 0)
      rec[cat(fused, "_speedup_over_cpu")] = rate / cpu_rate;

  print_rates(rec, {"gpu_fused", "gpu_fused_programmatic"});
  if (rec.contains("gpu_fused_speedup_over_cpu"))
    std::printf("  GPU with the fused step (--fused-step) over CPU: %.1fx (%d nodes per step)\n",
                rec["gpu_fused_speedup_over_cpu"].get<double>(), rec["gpu_fused"].value("graph_nodes", 0));
  if (rec.contains("gpu_fused_programmatic_speedup_over_cpu"))
    std::printf("  the same as programmatic dependent launches (--programmatic) over CPU: %.1fx\n",
                rec["gpu_fused_programmatic_speedup_over_cpu"].get<double>());
  const nlohmann::json& f = rec["launch_floor"];
  if (f.contains("graph_us") && gpu_rate > 0) {
    std::printf("  launch floor: %d near-empty kernels take %.1f us in a graph (%.2f us each), %.1f us launched one "
                "by one; a graphed step took %.1f us\n",
                f["launches"].get<int>(), f["graph_us"].get<double>(), f["graph_us_per_launch"].get<double>(),
                f["eager_us"].get<double>(), 1e6 * double(t.batch) / gpu_rate);
    if (f.contains("programmatic_graph_us"))
      std::printf("  launch floor as programmatic dependent launches: %.1f us in a graph (%.2f us each)\n",
                  f["programmatic_graph_us"].get<double>(), f["programmatic_graph_us_per_launch"].get<double>());
    else
      std::printf("  launch floor as programmatic dependent launches: failed: %s\n",
                  f["programmatic_error"].get<std::string>().c_str());
  } else if (f.contains("error")) {
    std::printf("  launch floor: failed: %s\n", f["error"].get<std::string>().c_str());
  } else if (f.contains("skipped")) {
    std::printf("  launch floor: skipped: %s\n", f["skipped"].get<std::string>().c_str());
  }
  std::fflush(stdout);
}

}  // namespace warpnet::cli::bench
