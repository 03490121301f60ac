// warpnet train: train a model on Fashion-MNIST or a synthetic set; with
// --data-parallel, one process per rank under mpirun; with --precision, in
// emulated mixed precision (src/nn/README.md).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "cli/commands.hpp"
#include "cli/mpirun_guard.hpp"
#include "cli/training_run.hpp"
#include "cli/validators.hpp"
#include "core/atomic_file.hpp"
#include "device/cuda/gpu.hpp"
#include "dist/communicator.hpp"
#include "dist/nccl_group.hpp"
#include "nn/checkpoint.hpp"
#include "nn/loss_scaler.hpp"
#include "nn/models.hpp"

namespace warpnet::cli {

namespace {

// Nothing a user has is replaced unasked: a file at --checkpoint is resumed
// from (--resume) or left alone, and the report never lands on the checkpoint.
void refuse_to_overwrite(const std::string& checkpoint, bool resume, const std::string& report) {
  namespace fs = std::filesystem;
  if (checkpoint.empty()) return;
  if (!report.empty() && names_same_file(report, checkpoint))
    fail("train: --report and --checkpoint name the same file, ", checkpoint, "; name two");
  std::error_code ec;
  const fs::file_status there = fs::status(checkpoint, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    fail("train --checkpoint ", checkpoint, ": cannot look at it: ", ec.message());
  // (A directory, a device or a pipe there is prepare_output_file's to refuse, with its own advice.)
  if (resume || !fs::is_regular_file(there)) return;
  std::string holds;
  try {
    const nn::Checkpoint ck = nn::load_checkpoint(checkpoint);
    holds = cat(" (a checkpoint of ", ck.model, " after ", ck.epoch, " epoch", ck.epoch == 1 ? "" : "s", ")");
  } catch (const std::exception& e) {
    holds = cat(" (not a checkpoint this build reads: ", e.what(), ")");
  }
  fail("train --checkpoint ", checkpoint, ": the file exists", holds,
       "; --resume continues from it; to start afresh, remove it or name another file");
}

}  // namespace

void add_train_command(CLI::App& app) {
  struct Args {
    nn::TrainOptions train;
    std::string data = "fashion-mnist";
    std::string data_dir;
    int64_t limit = 0;
    int threads = 0;
    std::string report;
    std::string device = "cpu";
    int64_t bucket_kib = 1024;
    bool no_overlap = false;
    bool no_fold = false;
    double dist_timeout = 120;
    std::string precision = "fp32";
    std::string graph = "auto";
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("train", "Train a model (LeNet-5, mini-AlexNet or an MLP) on the CPU, the emulator or a GPU");
  cmd->add_option("--model", args->train.model, "Model")
      ->check(CLI::IsMember(nn::model_names()))
      ->capture_default_str();
  cmd->add_option("--data", args->data, "Data set")
      ->check(CLI::IsMember({"fashion-mnist", "spirals", "blobs", "squares"}))
      ->capture_default_str();
  cmd->add_option("--data-dir", args->data_dir, kDataDirHelp)->check(kInputFolder);
  cmd->add_option("--limit", args->limit,
                  "Use only the first N training examples (N/6 test); 0 = all (a synthetic set: N generated, default "
                  "6000)")
      ->check(whole_in_range(0, INT64_MAX));
  cmd->add_option("--epochs", args->train.epochs, "Epochs to train (in total, when resuming)")
      ->check(whole_in_range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--batch-size", args->train.batch_size, "Examples per batch")
      ->check(whole_in_range(1, 65536))
      ->capture_default_str();
  cmd->add_option("--lr", args->train.lr, "Learning rate")->check(kPositiveFloat)->capture_default_str();
  cmd->add_option("--optimizer", args->train.optimizer, "Optimizer")
      ->check(CLI::IsMember({"sgd", "adam"}))
      ->capture_default_str();
  cmd->add_option("--momentum", args->train.momentum, "SGD momentum")
      ->check(in_range(0.0, 0.999))
      ->capture_default_str();
  cmd->add_option("--weight-decay", args->train.weight_decay,
                  "SGD weight decay: wd·w added to each gradient (L2, as torch.optim.SGD's)")
      ->check(in_range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--seed", args->train.seed,
                  "Seed for the weights, the shuffle, dropout's masks and the synthetic data sets")
      ->check(kSeed)
      ->capture_default_str();
  cmd->add_option("--threads", args->threads,
                  "CPU threads (0 = all cores, whatever OMP_NUM_THREADS says); a run repeats bit for bit on the "
                  "same count, another count changes the last bits")
      ->check(whole_in_range(0, 1024))
      ->capture_default_str();
  cmd->add_option("--device", args->device,
                  "Where to train: cpu (Eigen), emu (warpnet's kernels on the CUDA emulator: slow, use --limit) or "
                  "cuda (the same kernels on a GPU)")
      ->check(CLI::IsMember({"cpu", "emu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--kernels", args->train.kernels,
                  "Kernel versions on emu/cuda: best, a version N (each op's highest version <= N; an op whose "
                  "versions all pass N, its first), or op=N pairs such as matmul=3,conv2d=1 (`warpnet info "
                  "--kernels` lists them; the run prints the versions it launched)")
      ->capture_default_str();
  cmd->add_option("--precision", args->precision,
                  "Arithmetic of the forward and backward, emulated on the CPU by rounding with src/numeric: "
                  "fp32; tf32 (every matmul/conv input rounded to tf32, forward and backward); bf16 or fp16 "
                  "(matmul/conv inputs, a copy of the weights, activations and the gradients entering matmul/conv "
                  "backward in the format, fp32 accumulation; fp16 with dynamic loss scaling); fp8 (e4m3 forward, "
                  "e5m2 gradients, per-tensor delayed scaling). Master weights, optimizer and loss stay fp32. "
                  "CPU only")
      ->check(CLI::IsMember(ag::precision_names()))
      ->capture_default_str();
  cmd->add_option("--loss-scale", args->train.loss_scale.initial_scale,
                  "fp16: the initial loss scale, from 2^-24 to 2^64")
      ->check(in_range(nn::kMinLossScale, nn::kMaxLossScale))
      ->capture_default_str();
  cmd->add_option("--loss-scale-growth", args->train.loss_scale.growth_interval,
                  "fp16: double the loss scale after this many steps without an overflow")
      ->check(whole_in_range(1, int64_t(1) << 40))
      ->capture_default_str();
  cmd->add_option("--fp8-window", args->train.fp8.window, "fp8: steps of amax history a delayed scale comes from")
      ->check(whole_in_range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--fp8-margin", args->train.fp8.margin, "fp8: scale = max_finite / (amax * 2^margin)")
      ->check(whole_in_range(0, 64))
      ->capture_default_str();
  cmd->add_option("--graph", args->graph,
                  "Replay each training step from a captured CUDA graph: on, off, or auto (on for cuda, off on emu, "
                  "where it changes nothing but the checks)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  cmd->add_flag("--no-fold", args->no_fold,
                "emu/cuda: run each bias add and the ReLU after it as two kernels (by default one kernel does both)");
  cmd->add_flag("--fused-step", args->train.fused_step,
                "emu/cuda, LeNet-5, with the graphed step: forward, loss and backward as two kernels, an image per "
                "block (kernels/lenet5/), instead of the layers' kernels one by one");
  cmd->add_flag("--programmatic", args->train.programmatic_launches,
                "With the graph: capture the step as Hopper's programmatic dependent launches, so each kernel that "
                "waits inside for the one before (the gathers, the fused step's, the optimizer's) starts while that "
                "one still runs");
  cmd->add_option("--checkpoint", args->train.checkpoint, "Write a checkpoint here after every epoch")
      ->check(kOutputPath);
  cmd->add_flag("--resume", args->train.resume, "Continue from --checkpoint when it exists")
      ->needs("--checkpoint");
  cmd->add_option("--report", args->report, "Write a JSON report of the run here")->check(kOutputPath);
  cmd->add_flag("--data-parallel", args->train.data_parallel,
                "Data-parallel training under mpirun -np N: each rank trains on its share of every batch and the "
                "gradients are all-reduced (MPI); --batch-size is the global batch");
  cmd->add_option("--bucket-kib", args->bucket_kib, "Data-parallel: gradients are all-reduced in buckets of this size")
      ->check(whole_in_range(1, int64_t(1) << 20))
      ->capture_default_str();
  cmd->add_flag("--no-overlap", args->no_overlap,
                "Data-parallel: all-reduce every bucket after backward instead of as backward completes it");
  cmd->add_option("--dist-timeout", args->dist_timeout,
                  "Data-parallel: seconds a rank waits for the others in a collective before it ends the job "
                  "(1 to 86400)")
      ->check(in_range(1, 86400))
      ->capture_default_str();
  cmd->add_option("--inject-fault", args->train.inject_fault, "tests: rank=R,step=S,kind=exit|hang|error")->group("");
  cmd->callback([args, cmd] {
    args->train.device = args->device == "emu" ? Device::emu : args->device == "cuda" ? Device::cuda : Device::cpu;
    args->train.precision = ag::parse_precision(args->precision);
    using Graph = nn::TrainOptions::Graph;
    args->train.graph = args->graph == "on"    ? Graph::on
                        : args->graph == "off" ? Graph::off
                        : args->train.device == Device::cuda ? Graph::when_possible
                                                             : Graph::off;
    args->train.fold_bias_relu = !args->no_fold;
    WN_CHECK(args->train.device != Device::cpu || args->train.kernels == "best",
             "train: --kernels chooses kernel versions for --device emu or cuda; the CPU runs Eigen");
    if (!args->train.data_parallel) refuse_several_processes("train", "add --data-parallel, or run one process");
    std::optional<dist::Session> session;
    if (args->train.data_parallel) {
      WN_CHECK(dist::mpi_available(), "train --data-parallel needs MPI, and this warpnet was built without MPI: "
               "install libopenmpi-dev and openmpi-bin (scripts/setup.sh), configure with CMake again, rebuild, "
               "and run `mpirun -np 2 warpnet train --data-parallel ...`");
      args->train.bucket_bytes = args->bucket_kib * 1024;
      args->train.overlap = !args->no_overlap;
      session.emplace(args->dist_timeout);
    }
    // An option that does nothing in the mode chosen is said, not dropped in silence.
    const auto ignored = [&](const char* option, bool applies, const char* where) {
      if (cmd->count(option) > 0 && !applies && dist::rank() == 0)
        std::fprintf(stderr, "warpnet train: %s ignored: it applies %s\n", option, where);
    };
    const ag::Precision precision = args->train.precision;
    ignored("--no-fold", args->train.device != Device::cpu, "to --device emu or cuda");
    ignored("--momentum", args->train.optimizer == "sgd", "to --optimizer sgd");
    ignored("--weight-decay", args->train.optimizer == "sgd", "to --optimizer sgd");
    if (args->train.optimizer != "sgd") args->train.weight_decay = 0;
    ignored("--loss-scale", precision == ag::Precision::fp16, "to --precision fp16");
    ignored("--loss-scale-growth", precision == ag::Precision::fp16, "to --precision fp16");
    ignored("--fp8-window", precision == ag::Precision::fp8, "to --precision fp8");
    ignored("--fp8-margin", precision == ag::Precision::fp8, "to --precision fp8");
    ignored("--bucket-kib", args->train.data_parallel, "with --data-parallel");
    ignored("--no-overlap", args->train.data_parallel, "with --data-parallel");
    ignored("--dist-timeout", args->train.data_parallel, "with --data-parallel");
    ignored("--data-dir", args->data == "fashion-mnist", "to --data fashion-mnist");
    // With several ranks, a failure names the rank and ends the whole job
    // (MPI_Abort), so the other ranks do not wait for it.
    try {
      if (args->train.device == Device::cuda) {
        // Each rank its own GPU before the probe makes a context: probed
        // first, every rank would hold one on GPU 0 for the whole run (and
        // fail there on a GPU in exclusive-process mode).
        if (args->train.data_parallel && dist::nccl_available()) dist::use_local_gpu();
        const device::gpu::Info gpu = device::gpu::probe();
        WN_CHECK(gpu.usable, "train --device cuda: ", gpu.why_not, " (--device emu runs the same kernels on the CPU)");
      }
      if (dist::size() > 1) {  // rank 0 writes the report: one given to another rank alone would be dropped
        const std::vector<uint64_t> given = dist::allgather(uint64_t(!args->report.empty()));
        for (size_t r = 1; r < given.size(); ++r)
          WN_CHECK(given[r] == given[0], "train --data-parallel: rank ", r, "'s --report differs from rank 0's (",
                   given[0] ? "rank 0 writes one, rank " : "rank 0 writes none, rank ", r,
                   given[r] ? " names one" : " names none", "): every rank must run the same command");
      }
      if (dist::rank() == 0) {  // the rank that writes them
        refuse_to_overwrite(args->train.checkpoint, args->train.resume, args->report);
        if (!args->report.empty()) prepare_output_file(args->report, "train --report", kJsonFile);
        if (!args->train.checkpoint.empty()) prepare_output_file(args->train.checkpoint, "train --checkpoint", nn::kCheckpointFile);
      }
      DataSplits data = load_data(args->data, args->data_dir, args->limit, args->train.seed);
      nlohmann::json report = run_training(args->train, data, args->threads);
      if (!args->report.empty() && dist::rank() == 0) {
        write_file_atomically(args->report, report.dump(2) + "\n");
        std::printf("report: %s\n", args->report.c_str());
      }
    } catch (const std::exception& e) {
      if (dist::size() > 1) dist::abort_job(cat("error: ", e.what()));
      throw;
    }
  });
}

}  // namespace warpnet::cli
