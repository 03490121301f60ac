// The training loop: batches, forward, loss, backward, optimizer step,
// evaluation after each epoch, and checkpoints that training resumes from.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "datasets/dataset.hpp"
#include "nn/models.hpp"
#include "nn/optim.hpp"

namespace warpnet::nn {

struct TrainOptions {
  std::string model = "lenet5";
  int epochs = 1;
  int64_t batch_size = 64;
  std::string optimizer = "adam";
  double lr = 1e-3;
  double momentum = 0.9;  // SGD only
  uint64_t seed = 1;
  std::string checkpoint;  // written after every epoch when not empty
  bool resume = false;     // start from `checkpoint` when it exists
  // Where the model trains: cpu (Eigen), emu (the kernels on the emulator) or
  // cuda (the kernels on a GPU), and with which kernel versions on a device
  // (device::set_kernel_choice: "best", "1", "matmul=3,conv2d=1").
  Device device = Device::cpu;
  std::string kernels = "best";
};

struct StepProgress {
  int epoch;            // 1-based
  int64_t batch;        // 1-based within the epoch
  int64_t batches;      // per epoch
  double loss;          // running mean over the epoch so far
  double accuracy;      // running training accuracy
  double images_per_second;
};

struct EvalResult {
  double loss = 0;
  double accuracy = 0;  // fraction in [0,1]
};

struct EpochStats {
  int epoch;
  double train_loss, train_accuracy;
  double test_loss, test_accuracy;
  double seconds;  // training only, evaluation excluded
  double images_per_second;
};

// Accuracy and mean loss over a data set, without recording gradients, on
// the device the model's parameters are on.
EvalResult evaluate(Module& model, const data::Dataset& data, int64_t batch_size);

class Trainer {
 public:
  Trainer(TrainOptions options, const data::Dataset& train, const data::Dataset& test);

  using OnStep = std::function<void(const StepProgress&)>;
  using OnEpoch = std::function<void(const EpochStats&)>;
  // Trains the remaining epochs (all of them, or those after the checkpoint).
  std::vector<EpochStats> run(const OnStep& on_step = {}, const OnEpoch& on_epoch = {});

  Sequential& model() { return *model_; }
  Optimizer& optimizer() { return *optimizer_; }
  int first_epoch() const { return start_epoch_ + 1; }

 private:
  TrainOptions options_;
  data::Dataset train_;  // copies share the tensors: cheap
  data::Dataset test_;
  std::unique_ptr<Sequential> model_;
  std::unique_ptr<Optimizer> optimizer_;
  int start_epoch_ = 0;  // epochs already done (from a checkpoint)
};

}  // namespace warpnet::nn
