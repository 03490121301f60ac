// warpnet train: train a model on Fashion-MNIST or a synthetic set.
#include <cstdio>
#include <fstream>

#include "cli/commands.hpp"
#include "cli/training_run.hpp"
#include "core/atomic_file.hpp"
#include "nn/models.hpp"

namespace warpnet::cli {

void add_train_command(CLI::App& app) {
  struct Args {
    nn::TrainOptions train;
    std::string data = "fashion-mnist";
    std::string data_dir;
    int64_t limit = 0;
    int threads = 0;
    std::string report;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("train", "Train a model (LeNet-5, mini-AlexNet or an MLP) on the CPU");
  cmd->add_option("--model", args->train.model, "Model")
      ->check(CLI::IsMember(nn::model_names()))
      ->capture_default_str();
  cmd->add_option("--data", args->data, "Data set")
      ->check(CLI::IsMember({"fashion-mnist", "spirals", "blobs", "squares"}))
      ->capture_default_str();
  cmd->add_option("--data-dir", args->data_dir, "Directory with the Fashion-MNIST .gz files (default: $WARPNET_FASHION_MNIST or /usr/share/datasets/fashion-mnist)");
  cmd->add_option("--limit", args->limit, "Use only the first N training examples (N/6 test); 0 = all")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--epochs", args->train.epochs, "Epochs to train (in total, when resuming)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--batch-size", args->train.batch_size, "Examples per batch")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  cmd->add_option("--lr", args->train.lr, "Learning rate")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--optimizer", args->train.optimizer, "Optimizer")
      ->check(CLI::IsMember({"sgd", "adam"}))
      ->capture_default_str();
  cmd->add_option("--momentum", args->train.momentum, "SGD momentum")->check(CLI::Range(0.0, 0.999))->capture_default_str();
  cmd->add_option("--seed", args->train.seed, "Seed for weights and shuffling")->capture_default_str();
  cmd->add_option("--threads", args->threads, "CPU threads (0 = all cores)")->check(CLI::Range(0, 1024))->capture_default_str();
  cmd->add_option("--checkpoint", args->train.checkpoint, "Write a checkpoint here after every epoch");
  cmd->add_flag("--resume", args->train.resume, "Continue from --checkpoint when it exists");
  cmd->add_option("--report", args->report, "Write a JSON report of the run here");
  cmd->callback([args] {
    DataSplits data = load_data(args->data, args->data_dir, args->limit, args->train.seed);
    nlohmann::json report = run_training(args->train, data, args->threads);
    if (!args->report.empty()) {
      write_file_atomically(args->report, report.dump(2) + "\n");
      std::printf("report: %s\n", args->report.c_str());
    }
  });
}

}  // namespace warpnet::cli
