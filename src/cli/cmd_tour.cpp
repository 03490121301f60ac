// warpnet tour: the main job. Trains LeNet-5 for one epoch on Fashion-MNIST
// on the CPU and shows what it cost, runs it on warpnet's own kernels (the
// emulator, and a GPU when there is one), then says what each chapter shows.
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli/commands.hpp"
#include "cli/training_run.hpp"
#include "cli/validators.hpp"
#include "core/build_info.hpp"
#include "core/memory.hpp"
#include "device/backend.hpp"
#include "device/cuda/gpu.hpp"
#include "nn/summary.hpp"
#include "nn/training_records.hpp"

namespace warpnet::cli {

namespace {

struct Chapter {
  const char* folder;
  const char* teaches;
};

// The lesson chapters in teaching order; a chapter is marked ready when its
// folder is in the source tree this binary was built from.
constexpr Chapter kChapters[] = {
    {"01-forward-and-backward", "output = activation(W·x + b), the chain rule, gradients checked numerically"},
    {"02-flops-bytes-memory", "FLOPs and bytes per layer, and where a training step's memory goes"},
    {"03-simt-threads-warps-blocks",
     "the GPU as thousands of helpers: grid, block, warp, lane; coalescing; shuffles; the softmax ladder"},
    {"04-matmul-ladder", "matmul from a naive kernel toward cuBLAS, step by step"},
    {"05-convolution", "convolution as direct loops, im2col and implicit GEMM"},
    {"06-backprop-and-memory", "the bytes of a training step on the GPU"},
    {"07-precision", "FP32, TF32, FP16, BF16, FP8 and FP4: range, precision, speed; where a sum is kept"},
    {"08-training-a-cnn", "AlexNet in miniature, CPU against GPU"},
    {"09-many-gpus", "data parallelism, all-reduce and the interconnect"},
    {"10-inference", "latency, throughput and quantized weights"},
};

// The running mean loss after each of the first `batches` batches of one
// epoch over `train` on `device`, from the same initial weights and order.
std::vector<double> first_losses(nn::TrainOptions options, Device device, const data::Dataset& train, int batches) {
  options.device = device;
  options.epochs = 1;
  nn::Trainer trainer(options, data::head(train, batches * options.batch_size), data::Dataset{});
  std::vector<double> losses;
  trainer.run([&](const nn::StepProgress& s) { losses.push_back(s.loss); });
  return losses;
}

// Without a GPU here: what one made of LeNet-5 in the newest committed
// record (bench/results/, `warpnet bench train`), CPU and GPU timed in one
// run on that machine. Nothing when the source tree's records are not there.
void print_recorded_gpu_runs() {
  const std::filesystem::path results = std::filesystem::path(build::source_dir) / "bench" / "results";
  const std::vector<nn::RecordedTraining> runs = nn::newest_for_model(nn::recorded_trainings(results), "lenet5");
  if (runs.empty()) return;
  const nn::RecordedTraining& first = runs.front();
  std::printf("\nWhat a GPU made of LeNet-5, recorded on one (%s, %s, bench/results/%s;\n"
              "CPU and GPU timed in one run on that machine, %d CPU threads; nothing here is estimated):\n",
              first.gpu.c_str(), first.date.substr(0, 10).c_str(), first.file.c_str(), first.cpu_threads);
  for (const nn::RecordedTraining& r : runs)
    std::printf("  batch %5lld: CPU %8.0f images/s, GPU %9.0f images/s: %5.1f× faster\n",
                static_cast<long long>(r.batch_size), r.cpu_images_per_second, r.gpu_images_per_second, r.speedup);
  std::printf("Lesson 08 (part 5) lists every record, and says why a small batch gains least.\n");
}

// The heart of warpnet in one screen: the network above on its own CUDA
// kernels, run by the emulator, step for step beside the CPU; then, when
// there is a GPU, the same kernels on it for a whole epoch.
void kernels_part(const nn::TrainOptions& options, const DataSplits& data, double cpu_images_per_second) {
  constexpr int kBatches = 4;
  const std::vector<double> cpu = first_losses(options, Device::cpu, data.train, kBatches);
  const std::vector<double> emu = first_losses(options, Device::emu, data.train, kBatches);
  std::printf(
      "\nThe same network on warpnet's own CUDA kernels (kernels/), which the emulator runs on this\n"
      "CPU one GPU thread at a time: %zu batch%s from the same start, beside the CPU (Eigen):\n\n",
      cpu.size(), cpu.size() == 1 ? "" : "es");
  std::printf("  batch   loss on the CPU   loss on the kernels   relative difference\n");
  for (size_t i = 0; i < cpu.size() && i < emu.size(); ++i)
    std::printf("  %5zu   %15.6f   %19.6f   %19.1e\n", i + 1, cpu[i], emu[i], std::abs(emu[i] - cpu[i]) / cpu[i]);
  std::printf("\n  kernels:");
  for (const std::string& line : device::kernels_launched_with_candidates()) std::printf(" %s", line.c_str());
  std::printf(
      "\n  The same sums in another order: the losses agree to rounding. `warpnet trace <kernel>`\n"
      "  shows how each kernel uses memory; chapters 03 to 06 build them up.\n");

  const device::gpu::Info gpu = device::gpu::probe();
  if (!gpu.usable) {
    std::printf("\nThe GPU epoch is skipped: %s.\n"
                "On a machine with a GPU, `warpnet train --device cuda` runs these kernels on it.\n",
                gpu.why_not.c_str());
    print_recorded_gpu_runs();
    return;
  }
  std::printf("\nOn the GPU (%s), one epoch on the same kernels:\n\n", gpu.name.c_str());
  nn::TrainOptions on_gpu = options;
  on_gpu.device = Device::cuda;
  nn::Trainer trainer(on_gpu, data.train, data.test);
  const nn::EpochStats e = trainer.run().back();
  std::printf("  test accuracy %.2f%%, %.0f images/s: %.1fx the CPU's %.0f images/s in this run\n",
              100 * e.test_accuracy, e.images_per_second, e.images_per_second / cpu_images_per_second,
              cpu_images_per_second);
}

}  // namespace

void add_tour_command(CLI::App& app) {
  struct Args {
    int epochs = 1;
    int threads = 0;
    int64_t limit = 0;
    std::string data_dir;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("tour", "The main job: train LeNet-5 on Fashion-MNIST and see what it costs");
  cmd->add_option("--epochs", args->epochs, "Epochs")->check(whole_in_range(1, 100))->capture_default_str();
  cmd->add_option("--threads", args->threads, "CPU threads (0 = all cores)")->check(whole_in_range(0, 1024))->capture_default_str();
  cmd->add_option("--limit", args->limit, "Train on the first N images only (0 = all 60000)")->check(whole_in_range(0, INT64_MAX));
  cmd->add_option("--data-dir", args->data_dir, kDataDirHelp)->check(kInputFolder);
  cmd->callback([args] {
    std::printf(
        "warpnet tour\n"
        "============\n"
        "A neural network is a chain of layers, each output = activation(W·x + b). Training runs\n"
        "the chain forward, measures the loss, runs it backward for the gradients (the chain rule),\n"
        "and nudges every weight against its gradient. Here is LeNet-5, the 1998 digit reader,\n"
        "for a batch of 64 Fashion-MNIST images (28×28, one channel):\n\n");
    nn::TrainOptions options;
    options.model = "lenet5";
    options.epochs = args->epochs;
    options.batch_size = 64;
    options.optimizer = "adam";
    options.lr = 1e-3;
    options.seed = 1;
    // The data first: a missing set is said before a page of tables, not after.
    DataSplits data = load_data("fashion-mnist", args->data_dir, args->limit, options.seed);
    {
      auto preview = nn::make_lenet5(10, options.seed);
      std::printf("%s\n", nn::format_summary(nn::summarize(*preview, {64, 1, 28, 28})).c_str());
    }
    std::printf(
        "Most FLOPs are in the convolutions, most parameters in the first fully connected layer.\n"
        "The backward pass costs about twice the forward. Training now, on this CPU:\n\n");
    nlohmann::json report = run_training(options, data, args->threads);

    const double ips = report["train_images_per_second"].get<double>();
    std::printf("\nLeNet-5 reached %.2f%% test accuracy after %d epoch(s) at %.0f images/s on the CPU.\n",
                100 * report["test_accuracy"].get<double>(), args->epochs, ips);
    const auto& peak = report["peak_bytes_by_tag"];
    const double activations = peak["activations"].get<double>(), parameters = peak["parameters"].get<double>();
    std::printf("At its peak the training step kept %s of activations for the backward pass, ",
                format_bytes(int64_t(activations)).c_str());
    if (activations >= 2 * parameters)
      std::printf("%.0f× the\n%s of parameters: batch size, more than model size, decides a small network's memory.\n",
                  activations / parameters, format_bytes(int64_t(parameters)).c_str());
    else  // (a --limit smaller than a batch: the activations of a few images)
      std::printf("beside\n%s of parameters; at a full batch the activations grow past them.\n",
                  format_bytes(int64_t(parameters)).c_str());
    kernels_part(options, data, ips);
    std::printf("\nThe chapters (lessons/):\n");
    const std::string present = std::string(";") + build::lessons + ";";
    for (const Chapter& c : kChapters) {
      const bool ready = present.find(std::string(";") + c.folder + ";") != std::string::npos;
      std::printf("  %-30s %-8s %s\n", c.folder, ready ? "ready" : "planned", c.teaches);
    }
    std::printf("\nEach ready chapter has a README.md to read and a program to run (build/bin/lesson<NN>).\n");
  });
}

}  // namespace warpnet::cli
