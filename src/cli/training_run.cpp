#include "cli/training_run.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

#include "cli/machine.hpp"
#include "cli/precision_report.hpp"
#include "cli/progress.hpp"
#include "core/atomic_file.hpp"
#include "core/device_memory.hpp"
#include "core/host_memory.hpp"
#include "core/memory.hpp"
#include "cpu/ops.hpp"
#include "device/backend.hpp"
#include "datasets/idx.hpp"
#include "datasets/synthetic.hpp"
#include "dist/communicator.hpp"

namespace warpnet::cli {

DataSplits load_data(const std::string& name, const std::string& dir, int64_t limit, uint64_t seed) {
  MemoryScope scope(MemTag::other, "dataset");
  DataSplits d;
  if (name == "fashion-mnist") {
    const std::string root = dir.empty() ? data::fashion_mnist_dir() : dir;
    // With --limit only what is used is read: one example more than head()
    // below keeps, so it cuts and names the splits as it always has.
    // (No file holds 2^63 - 1 examples: the cap keeps the + 1 from overflowing.)
    d.train = data::load_fashion_mnist(root, true, limit > 0 ? std::min(limit, INT64_MAX - 1) + 1 : 0);
    d.test = data::load_fashion_mnist(root, false, limit > 0 ? std::max<int64_t>(limit / 6, 1) + 1 : 0);
    const auto image_of = [](const data::Dataset& s) {  // (1, H, W) of (N, 1, H, W)
      return Shape(std::vector<int64_t>(s.inputs.shape().begin() + 1, s.inputs.shape().end()));
    };
    WN_CHECK(image_of(d.train) == image_of(d.test), "Fashion-MNIST in ", root, ": the training images are ",
             image_of(d.train), " but the test images ", image_of(d.test), ": the two splits must match");
    // One split's files copied over the other's would test on the images
    // trained on: the accuracy of memory. The first images tell.
    const int64_t first = std::min<int64_t>({d.train.inputs.dim(0), d.test.inputs.dim(0), 100});
    const size_t first_bytes = size_t(first * (d.train.inputs.nbytes() / d.train.inputs.dim(0)));
    WN_CHECK(std::memcmp(d.train.inputs.raw(), d.test.inputs.raw(), first_bytes) != 0, "Fashion-MNIST in ", root,
             ": the first ", first, " training and test images are the same: one split's files are a copy of the "
             "other's (train-images-idx3-ubyte.gz and t10k-images-idx3-ubyte.gz must differ)");
  } else if (name == "spirals" || name == "blobs" || name == "squares") {
    // 6:1 train/test like Fashion-MNIST.
    const int64_t n = limit > 0 ? limit : 6000, n_test = std::max<int64_t>(n / 6, 1);
    // Generated whole: a --limit past what the machine holds would be killed
    // by the kernel's OOM killer with no word. Each example is kept about
    // three times (generated, split or sliced, standardized).
    const double example_bytes = name == "squares" ? 28 * 28 * 4 + 4 : 2 * 4 + 4;
    const double examples = double(n) + double(n_test), needed = 3 * example_bytes * examples;
    const int64_t available = available_memory_bytes();
    WN_CHECK(available < 0 || needed <= double(available), "--limit ", limit, ": the ", name,
             " set, generated whole with its test split, needs about ", format_bytes(int64_t(std::min(needed, 9e18))),
             "; this machine has ", format_bytes(available), " available");
    if (name == "blobs") {
      // One draw, split: the blobs' centres come from the seed, so a test
      // set drawn with another seed has its classes elsewhere (it scored 0%).
      const data::Dataset all = data::make_blobs(n + n_test, 4, 2, seed);
      d.train = data::slice(all, 0, n);
      d.test = data::slice(all, n, n + n_test);
      d.train.name = d.test.name = "blobs";
    } else {
      // Spirals' arms and squares' cells are fixed: a seed only draws the
      // noise, so the two splits take different seeds.
      auto make = [&](int64_t count, uint64_t s) {
        return name == "spirals" ? data::make_spirals(count, 3, s) : data::make_squares(count, 4, 28, s);
      };
      d.train = make(n, seed);
      d.test = make(n_test, seed + 7919);
    }
    return d;
  } else {
    fail("unknown data set '", name, "' (choose fashion-mnist, spirals, blobs or squares)");
  }
  if (limit > 0) {
    d.train = data::head(d.train, limit);
    d.test = data::head(d.test, std::max<int64_t>(limit / 6, 1));
  }
  // Pixels in [0,1] have mean 0.29: centring them on zero with unit spread
  // lets the first layer's weights start in a useful range.
  const data::Standardization s = data::input_statistics(d.train);
  d.train = data::standardized(d.train, s);
  d.test = data::standardized(d.test, s);
  return d;
}

namespace {

// Only rank 0 of a data-parallel job prints; the other ranks train in silence.
__attribute__((format(printf, 1, 2))) void say(const char* format, ...) {
  if (dist::rank() != 0) return;
  va_list args;
  va_start(args, format);
  std::vprintf(format, args);
  va_end(args);
}

// More threads than cores add no speed: each waits for others the OS has set
// aside (at every parallel op's barrier, and between ranks at every
// all-reduce), and a step slows down many times over with no error to say
// why. So it is said here (rank 0, on stderr), and the run goes on as asked.
void warn_if_oversubscribed(int threads, int ranks_here) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (threads <= 0 || cores <= 0 || int64_t(threads) * ranks_here <= cores || dist::rank() != 0) return;
  const std::string each = cat(threads, threads == 1 ? " thread" : " threads");
  const std::string who = ranks_here > 1 ? cat(ranks_here, " ranks of ", each, " each") : each;
  const std::string hint = ranks_here > cores ? cat("at most ", cores, " ranks here")
                           : ranks_here > 1   ? "--threads 0 shares the cores among the ranks"
                                              : "--threads 0 takes one per core";
  std::fprintf(stderr,
               "warpnet: note: %s on this machine's %d cores: threads beyond the cores wait for each other, which "
               "slows training down, often many times (%s)\n",
               who.c_str(), cores, hint.c_str());
}

}  // namespace

nlohmann::json run_training(const nn::TrainOptions& options, const DataSplits& data, int threads) {
  // Ranks on one machine share its cores: by default each takes its share.
  if (options.data_parallel && threads == 0)
    threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / dist::local_size());
  warn_if_oversubscribed(threads, options.data_parallel ? dist::local_size() : 1);
  cpu::set_num_threads(threads);
  MemoryTracker::instance().reset_peaks();
  nn::Trainer trainer(options, data.train, data.test);
  nn::Sequential& model = trainer.model();

  Shape example(std::vector<int64_t>(data.train.inputs.shape().begin() + 1, data.train.inputs.shape().end()));
  std::vector<int64_t> batch_dims{options.batch_size};
  batch_dims.insert(batch_dims.end(), example.begin(), example.end());
  const OpCost per_batch = model.cost(Shape(batch_dims));
  say("model %s: %lld parameters, %.2f MFLOP forward per example\n", options.model.c_str(),
              static_cast<long long>(model.parameter_count()), per_batch.flops / double(options.batch_size) / 1e6);
  say("data %s: %lld training, %lld test examples; batch %lld, %s lr %g, seed %llu, %d thread%s\n",
              data.train.name.c_str(), static_cast<long long>(data.train.size()),
              static_cast<long long>(data.test.size()), static_cast<long long>(options.batch_size),
              options.optimizer.c_str(), options.lr, static_cast<unsigned long long>(options.seed),
              cpu::num_threads(), cpu::num_threads() == 1 ? "" : "s");
  if (options.precision != ag::Precision::fp32)
    say("precision %s, emulated: values rounded with src/numeric's encode/decode and kept in fp32 words (the "
        "accuracy of the format, not its speed); master weights, optimizer and loss in fp32\n",
        std::string(ag::name_of(options.precision)).c_str());
  if (options.device != Device::cpu)
    say("device %s: warpnet's kernels (--kernels %s)%s\n", std::string(name_of(options.device)).c_str(),
                options.kernels.c_str(),
                options.device == Device::emu ? " on the CUDA emulator: every GPU thread is a CPU fiber, so expect "
                                                "seconds per batch"
                                              : "");
  if (options.data_parallel) {
    const nn::Shard first = nn::shard_of(options.batch_size, 0, dist::size());
    say("data-parallel: %d rank%s (%s), global batch %lld, rank 0 takes %lld; %zu gradient bucket%s of at most %lld "
        "KiB, all-reduced %s\n%s",
        dist::size(), dist::size() == 1 ? "" : "s",
        trainer.buckets()->on_gpu() ? "gradients all-reduced by NCCL on the GPUs" : dist::mpi_library().c_str(),
        static_cast<long long>(options.batch_size),
        static_cast<long long>(first.size()), trainer.buckets()->count(), trainer.buckets()->count() == 1 ? "" : "s",
        static_cast<long long>(options.bucket_bytes / 1024),
        options.overlap ? "as backward completes each" : "after backward", trainer.buckets()->describe().c_str());
  }
  if (trainer.first_epoch() > 1) {
    say("resuming from %s after epoch %d\n", options.checkpoint.c_str(), trainer.first_epoch() - 1);
    if (trainer.first_epoch() <= options.epochs)  // (else nothing trains: said after the run)
      for (const std::string& change : trainer.changed_on_resume())
        say("  changed from here on: %s\n", change.c_str());
  }
  else if (options.resume && !path_exists(options.checkpoint))
    say("no checkpoint at %s yet: training from epoch 1\n", options.checkpoint.c_str());

  nlohmann::json epochs = nlohmann::json::array();
  // One bar per epoch, created on its first batch.
  ProgressBar bar("");
  int current_epoch = 0, last_tenth = -1;
  auto on_step = [&](const nn::StepProgress& s) {
    if (dist::rank() != 0) return;
    char status[128];
    std::snprintf(status, sizeof status, "loss %.4f  acc %5.1f%%  %6.0f img/s", s.loss, 100 * s.accuracy,
                  s.images_per_second);
    if (options.data_parallel) {
      // mpirun hands every rank a pseudo-terminal whatever its own output
      // is (a log, a pipe): print a line every tenth of the epoch instead
      // of redrawing one in place.
      const int tenth = static_cast<int>(10 * s.batch / std::max<int64_t>(s.batches, 1));
      if (s.epoch != current_epoch) last_tenth = -1;
      current_epoch = s.epoch;
      if (tenth == last_tenth) return;
      last_tenth = tenth;
      say("epoch %d/%d %lld/%lld  %s\n", s.epoch, options.epochs, static_cast<long long>(s.batch),
          static_cast<long long>(s.batches), status);
      std::fflush(stdout);
      return;
    }
    if (s.epoch != current_epoch) {
      current_epoch = s.epoch;
      bar = ProgressBar(cat("epoch ", s.epoch, "/", options.epochs));
    }
    bar.update(s.batch, s.batches, status);
  };
  auto on_epoch = [&](const nn::EpochStats& e) {
    bar.finish();
    say("epoch %d: train loss %.4f acc %.2f%% | test loss %.4f acc %.2f%% | %.1f s, %.0f images/s\n",
                e.epoch, e.train_loss, 100 * e.train_accuracy, e.test_loss, 100 * e.test_accuracy, e.seconds,
                e.images_per_second);
    epochs.push_back({{"epoch", e.epoch},
                      {"train_loss", e.train_loss},
                      {"train_accuracy", e.train_accuracy},
                      {"test_loss", e.test_loss},
                      {"test_accuracy", e.test_accuracy},
                      {"seconds", e.seconds},
                      {"images_per_second", e.images_per_second}});
    std::fflush(stdout);
  };
  const TransferCounts transfers_before = transfer_counts();
  std::vector<nn::EpochStats> history = trainer.run(on_step, on_epoch);
  const TransferCounts transfers_after = transfer_counts();
  const TransferCounts transfers{transfers_after.to_device - transfers_before.to_device,
                                 transfers_after.to_host - transfers_before.to_host,
                                 transfers_after.within - transfers_before.within};

  double test_accuracy = history.empty() ? 0.0 : history.back().test_accuracy;
  if (history.empty()) {  // resumed from a checkpoint at or past --epochs: the restored model, as it is
    const nn::EvalResult restored = trainer.evaluate_test_set();
    test_accuracy = restored.accuracy;
    say("nothing to train: %s holds epoch %d, and --epochs is %d; the restored model's test loss %.4f\n",
        options.checkpoint.c_str(), trainer.first_epoch() - 1, options.epochs, restored.loss);
  }
  say("precision %s: test accuracy %.2f%%\n", std::string(ag::name_of(options.precision)).c_str(),
      100 * test_accuracy);
  const nlohmann::json precision = report_precision(trainer, options.precision, dist::rank() == 0);
  say("memory by tag (current and peak during training%s):\n%s",
      options.precision == ag::Precision::fp32 || options.precision == ag::Precision::tf32
          ? ""
          : "; low-precision tensors counted at their format's width",
      MemoryTracker::instance().report().c_str());
  if (const nn::GraphedStep* graphed = trainer.graphed_step(); graphed && graphed->nodes() == 0)
    say("graph: none captured (the first full batch of %lld runs as is, the second is captured; this run had "
        "fewer)\n",
        static_cast<long long>(options.batch_size));
  else if (graphed)
    say("graph: every full batch after the first replayed one captured step of %zu nodes%s%s\n", graphed->nodes(),
        graphed->fused() ? " (--fused-step: forward, loss and backward in lenet5_step's two kernels)" : "",
        graphed->programmatic() ? ", as programmatic dependent launches" : "");
  else if (!trainer.graph_note().empty())
    say("graph: none (%s)\n", trainer.graph_note().c_str());
  if (trainer.folded_relus() > 0)
    say("bias + ReLU: one kernel forward and one backward in each of %d layers (--no-fold: two each)\n",
        trainer.folded_relus());
  if (options.device != Device::cpu)
    // A copy to or from the host waits for the device's queue: how often training made the host wait.
    say("copies while training (evaluation included): %lld to the device, %lld to the host, %lld within it\n",
        static_cast<long long>(transfers.to_device), static_cast<long long>(transfers.to_host),
        static_cast<long long>(transfers.within));
  const std::vector<std::string> kernels = device::kernels_launched();
  if (!kernels.empty()) {
    say("kernels launched (the candidate each ran, for the versions that pick one per size):");
    for (const std::string& line : device::kernels_launched_with_candidates()) say(" %s", line.c_str());
    say("\n");
  }
  for (const std::string& unused : device::chosen_ops_not_launched())
    say("--kernels %s: this training never launched that op, so the choice changed nothing\n", unused.c_str());
  const device::TuningLog tuned = device::kernels_tuned();
  if (!tuned.lines.empty())
    say("kernels tuned on this GPU at their first launch: %zu sizes in %.2f s (in the first epoch's time; the "
        "report lists each)\n", tuned.lines.size(), tuned.seconds);
  if (!options.checkpoint.empty() && !history.empty()) say("checkpoint: %s\n", options.checkpoint.c_str());

  nlohmann::json report;
  report["machine"] = machine_record();
  report["model"] = options.model;
  report["data"] = data.train.name;
  report["batch_size"] = options.batch_size;
  report["optimizer"] = options.optimizer;
  report["lr"] = options.lr;
  report["seed"] = options.seed;
  report["threads"] = cpu::num_threads();
  report["device"] = name_of(options.device);
  report["precision"] = precision;
  if (options.device != Device::cpu) {
    report["kernels"] = options.kernels;
    report["kernels_launched"] = kernels;
    report["kernels_tuned"] = {{"seconds", tuned.seconds}, {"sizes", tuned.lines}};
    report["graph_nodes"] = trainer.graphed_step() ? trainer.graphed_step()->nodes() : 0;
    report["fused_step"] = options.fused_step;
    report["programmatic_launches"] = options.programmatic_launches;
    report["copies"] = {{"to_device", transfers.to_device}, {"to_host", transfers.to_host},
                        {"within_device", transfers.within}};
  }
  if (options.data_parallel)
    report["data_parallel"] = {{"ranks", dist::size()},
                               {"mpi", dist::mpi_library()},
                               {"buckets", trainer.buckets()->count()},
                               {"bucket_bytes", options.bucket_bytes},
                               {"overlap", options.overlap}};
  report["epochs"] = epochs;
  nlohmann::json seconds = nlohmann::json::array();
  double images = 0, total_seconds = 0;
  for (const auto& e : history) {
    seconds.push_back(e.seconds);
    images += e.images_per_second * e.seconds;
    total_seconds += e.seconds;
  }
  report["epoch_seconds"] = seconds;
  report["train_images_per_second"] = total_seconds > 0 ? images / total_seconds : 0.0;
  report["test_accuracy"] = test_accuracy;
  nlohmann::json memory;
  for (int t = 0; t < kMemTagCount; ++t)
    memory[std::string(name_of(MemTag(t)))] = MemoryTracker::instance().tag(MemTag(t)).peak;
  report["peak_bytes_by_tag"] = memory;
  return report;
}

}  // namespace warpnet::cli
