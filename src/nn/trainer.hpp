// The training loop: batches, forward, loss, backward, optimizer step,
// evaluation after each epoch, and checkpoints that training resumes from.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/precision.hpp"
#include "datasets/dataset.hpp"
#include "nn/data_parallel.hpp"
#include "nn/graphed_step.hpp"
#include "nn/loss_scaler.hpp"
#include "nn/models.hpp"
#include "nn/optim.hpp"

namespace warpnet::nn {

struct Checkpoint;

struct TrainOptions {
  std::string model = "lenet5";
  int epochs = 1;
  int64_t batch_size = 64;
  std::string optimizer = "adam";
  double lr = 1e-3;
  double momentum = 0.9;     // SGD only
  double weight_decay = 0;   // SGD only: wd·w added to the gradient (L2, as torch.optim.SGD's weight_decay)
  uint64_t seed = 1;
  std::string checkpoint;  // written after every epoch when not empty
  bool resume = false;     // start from `checkpoint` when it exists
  // Where the model trains: cpu (Eigen), emu (the kernels on the emulator) or
  // cuda (the kernels on a GPU), and with which kernel versions on a device
  // (device::set_kernel_choice: "best", "1", "matmul=3,conv2d=1").
  Device device = Device::cpu;
  std::string kernels = "best";
  // The precision of the forward and backward (autograd/precision.hpp):
  // fp32, tf32, bf16, fp16 (with dynamic loss scaling) or fp8 (delayed
  // scaling); master weights, the optimizer and the loss stay fp32. The
  // rounding is emulated on the CPU: device cpu only.
  ag::Precision precision = ag::Precision::fp32;
  LossScaleOptions loss_scale;  // fp16
  ag::Fp8Options fp8;           // fp8
  // Data-parallel training, one process per rank under mpirun, with a
  // dist::Session made before the Trainer: every rank draws the same global
  // batches of batch_size rows (same seed), trains on its contiguous shard
  // and all-reduces the gradients in buckets of bucket_bytes, started as
  // backward completes them when `overlap` (nn/data_parallel.hpp). Rank 0
  // writes the checkpoints; evaluation is sharded and summed.
  bool data_parallel = false;
  int64_t bucket_bytes = int64_t(1) << 20;
  bool overlap = true;
  std::string inject_fault;  // tests only: "rank=1,step=3,kind=exit|hang|error"
  // emu or cuda: every full batch's step after the first is one replay of a
  // captured graph (nn/graphed_step.hpp); the last, smaller batch of an
  // epoch runs as usual. Not on the CPU or with --data-parallel (nor with
  // --precision, which is CPU only): `on` refuses them, `when_possible`
  // trains without a graph and says why (Trainer::graph_note).
  enum class Graph { off, on, when_possible };
  Graph graph = Graph::off;
  // emu or cuda: each ReLU right after a Conv2d or Linear is folded into
  // that layer (Sequential::fold_bias_relu): one kernel adds the bias and
  // applies the ReLU. The CPU always runs every layer on its own, as the
  // chapters' per-layer tables count them.
  bool fold_bias_relu = true;
  // LeNet-5 on emu or cuda with the graphed step: the step's forward, loss
  // and backward as the lenet5_step op's two kernels (kernels/lenet5/), an
  // image per block, instead of the layers' kernels one by one; the update
  // is the optimizer's kernel as before. Refused for another model or
  // without a graph (Graph::on, or when_possible on cuda).
  bool fused_step = false;
  // With the graph: capture the step as programmatic dependent launches
  // (Hopper; device/graph.hpp, StepGraph::Launches::programmatic). The
  // kernels that wait for the one before inside (launch_dependent_kernel:
  // the gathers, the fused step's two kernels, the multi-tensor updates)
  // then start while it still runs; every other kernel follows as usual.
  bool programmatic_launches = false;
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
  // Trains the remaining epochs (all of them, or those after the checkpoint:
  // none when it holds --epochs or more).
  std::vector<EpochStats> run(const OnStep& on_step = {}, const OnEpoch& on_epoch = {});
  // The model on the test set, in the precision it trains in (data-parallel:
  // over all ranks); zeros for an empty test set.
  EvalResult evaluate_test_set();

  Sequential& model() { return *model_; }
  Optimizer& optimizer() { return *optimizer_; }
  int first_epoch() const { return start_epoch_ + 1; }
  // Settings of the resumed run that differ from the checkpoint's run and
  // apply from the first epoch on ("--lr 0.01 (the checkpoint's run: 0.001)").
  const std::vector<std::string>& changed_on_resume() const { return changed_on_resume_; }
  // Data-parallel only: the gradient buckets (null otherwise).
  const GradientBuckets* buckets() const { return buckets_.get(); }
  // The captured step (null when training without a graph), and why there
  // is none when one was asked for where possible ("" otherwise).
  const GraphedStep* graphed_step() const { return graphed_.get(); }
  const std::string& graph_note() const { return graph_note_; }
  // The layers whose ReLU was folded into them (TrainOptions::fold_bias_relu).
  int folded_relus() const { return folded_relus_; }
  // The precision policy (null for fp32) and fp16's loss scaler (null otherwise).
  const ag::MixedPrecision* precision_policy() const { return precision_.get(); }
  const DynamicLossScaler* loss_scaler() const { return scaler_.get(); }

 private:
  // Training totals of one epoch, over all ranks.
  struct EpochSums {
    double loss_sum = 0;  // Σ loss·examples
    int64_t correct = 0, seen = 0;
    double seconds = 0;
  };
  // Batch `index` of `epoch`, training step number `step` (Module::Step).
  StepOutcome eager_step(const data::Batch& batch, int epoch, int64_t index, int64_t step);
  EpochSums train_epoch(int epoch, const OnStep& on_step);
  EpochSums train_epoch_data_parallel(int epoch, const OnStep& on_step);
  void setup_data_parallel();
  void setup_graph();
  // What a checkpoint records of the training set (name, size and data_hash),
  // to refuse resuming on another.
  std::string training_set_description() const;
  // The settings a checkpoint records ("batch-size", "lr", and SGD's
  // "momentum" and "weight-decay"), and their check on resume.
  std::vector<std::pair<std::string, double>> recorded_settings() const;
  void check_resumed_settings(const Checkpoint& ck);
  // A run that diverged: "train: <what> (learning rate L too high?)" and what
  // the checkpoint file keeps, since epoch `epoch`'s is not written.
  std::string diverged(const std::string& what, int epoch) const;
  // Stops the run at a loss that is not a number (batch `index` of `epoch`).
  void check_loss(double loss, int epoch, int64_t index) const;

  TrainOptions options_;
  data::Dataset train_;  // copies share the tensors: cheap
  data::Dataset test_;
  std::unique_ptr<Sequential> model_;
  std::unique_ptr<Optimizer> optimizer_;
  int start_epoch_ = 0;  // epochs already done (from a checkpoint)
  std::vector<std::string> changed_on_resume_;
  std::unique_ptr<ag::MixedPrecision> precision_;
  std::unique_ptr<DynamicLossScaler> scaler_;
  // emu or cuda, one process: the training set on the device, each batch
  // gathered there (nn/device_dataset.hpp). Null on the CPU and with
  // --data-parallel, whose ranks copy their shards from the host.
  std::unique_ptr<DeviceDataset> resident_;
  std::unique_ptr<GraphedStep> graphed_;
  std::string graph_note_;
  int folded_relus_ = 0;
  // Data-parallel state.
  std::unique_ptr<GradientBuckets> buckets_;
  std::unique_ptr<Fp8AmaxSharing> fp8_sharing_;  // data-parallel fp8: every rank's amaxes, shared
  data::Dataset test_shard_;  // this rank's rows of the test set
  InjectedFault fault_;
};

}  // namespace warpnet::nn
