#include "nn/trainer.hpp"

#include <cmath>
#include <filesystem>

#include "autograd/functions.hpp"
#include "core/memory.hpp"
#include "core/timer.hpp"
#include "device/backend.hpp"
#include "nn/checkpoint.hpp"

namespace warpnet::nn {

namespace {

// Correct predictions in a batch: argmax of each row of probs against labels.
int64_t count_correct(const Tensor& probs, const Tensor& labels) {
  const int64_t n = probs.dim(0), c = probs.dim(1);
  const float* p = probs.data<float>();
  const int32_t* y = labels.data<int32_t>();
  int64_t correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = p + i * c;
    int64_t best = 0;
    for (int64_t j = 1; j < c; ++j)
      if (row[j] > row[best]) best = j;
    correct += best == y[i];
  }
  return correct;
}

// Where a model runs: where its parameters are.
Device device_of(Module& model) {
  const std::vector<Parameter*> params = model.parameters();
  return params.empty() ? Device::cpu : params.front()->var.value().device();
}

Shape example_shape(const data::Dataset& data) {
  std::vector<int64_t> dims(data.inputs.shape().begin() + 1, data.inputs.shape().end());
  return Shape(dims);
}

}  // namespace

EvalResult evaluate(Module& model, const data::Dataset& data, int64_t batch_size) {
  WN_CHECK(data.size() > 0, "evaluate: the data set '", data.name, "' is empty");
  ag::NoGradScope no_grad;
  const bool was_training = model.training();
  model.set_training(false);
  data::Batches batches(data, batch_size, false, 0);
  data::Batch batch;
  double loss_sum = 0;
  int64_t correct = 0;
  const Device device = device_of(model);
  MemoryScope batch_scope(MemTag::other, "batch");  // the copied-out inputs
  while (batches.next(batch)) {
    Tensor probs;
    ag::Var logits = model(ag::Var(batch.inputs.to(device)));
    MemoryScope loss_scope(MemTag::activation, "loss");
    ag::Var loss = ag::softmax_cross_entropy(logits, batch.labels.to(device), &probs);
    loss_sum += loss.value().item(0) * double(batch.labels.dim(0));
    correct += count_correct(probs.to(Device::cpu), batch.labels);
  }
  model.set_training(was_training);
  return {loss_sum / double(data.size()), double(correct) / double(data.size())};
}

Trainer::Trainer(TrainOptions options, const data::Dataset& train, const data::Dataset& test)
    : options_(std::move(options)), train_(train), test_(test) {
  WN_CHECK(options_.epochs >= 1, "train: epochs must be at least 1, got ", options_.epochs);
  WN_CHECK(options_.batch_size >= 1, "train: batch size must be at least 1, got ", options_.batch_size);
  WN_CHECK(train_.size() > 0, "train: the training set '", train_.name, "' is empty");
  model_ = make_model(options_.model, example_shape(train_), train_.num_classes, options_.seed);
  if (options_.device != Device::cpu) {
    device::set_kernel_choice(options_.kernels);
    model_->to(options_.device);  // before the optimizer, whose state is made beside each parameter
  }
  optimizer_ = make_optimizer(options_.optimizer, model_->parameters(), options_.lr, options_.momentum);
  if (options_.resume && !options_.checkpoint.empty() && std::filesystem::exists(options_.checkpoint)) {
    Checkpoint ck = load_checkpoint(options_.checkpoint);
    WN_CHECK(ck.model == options_.model, options_.checkpoint, ": holds model '", ck.model, "', not '",
             options_.model, "'");
    restore(ck, *model_, optimizer_.get());
    start_epoch_ = static_cast<int>(ck.epoch);
  }
}

std::vector<EpochStats> Trainer::run(const OnStep& on_step, const OnEpoch& on_epoch) {
  std::vector<EpochStats> history;
  // Each epoch's shuffle comes from (seed, epoch), so a resumed run sees the
  // same batches the uninterrupted run would have.
  for (int epoch = start_epoch_ + 1; epoch <= options_.epochs; ++epoch) {
    data::Batches batches(train_, options_.batch_size, true, options_.seed * 1000003ull + uint64_t(epoch));
    model_->set_training(true);
    data::Batch batch;
    double loss_sum = 0;
    int64_t seen = 0, correct = 0, index = 0;
    Timer timer;
    MemoryScope batch_scope(MemTag::other, "batch");  // the copied-out inputs
    while (batches.next(batch)) {
      ag::Tape tape;
      ag::TapeScope recording(tape);
      Tensor probs;
      ag::Var logits = (*model_)(ag::Var(batch.inputs.to(options_.device)));
      MemoryScope loss_scope(MemTag::activation, "loss");
      ag::Var loss = ag::softmax_cross_entropy(logits, batch.labels.to(options_.device), &probs);
      const double value = loss.value().item(0);
      if (!std::isfinite(value))
        fail("train: the loss became ", value, " at epoch ", epoch, ", batch ", index + 1,
             " (learning rate ", options_.lr, " too high?)");
      optimizer_->zero_grad();
      tape.backward(loss);
      optimizer_->step();
      const int64_t b = batch.labels.dim(0);
      loss_sum += value * double(b);
      correct += count_correct(probs.to(Device::cpu), batch.labels);
      seen += b;
      ++index;
      if (on_step)
        on_step({epoch, index, batches.count(), loss_sum / double(seen), double(correct) / double(seen),
                 double(seen) / std::max(timer.seconds(), 1e-9)});
    }
    const double seconds = timer.seconds();
    // Evaluate at the training batch size so the memory peaks stay those of training.
    EvalResult test = test_.size() > 0 ? evaluate(*model_, test_, options_.batch_size) : EvalResult{};
    EpochStats stats{epoch, loss_sum / double(seen), double(correct) / double(seen), test.loss, test.accuracy,
                     seconds, double(seen) / seconds};
    if (!options_.checkpoint.empty())
      save_checkpoint(options_.checkpoint, capture(options_.model, *model_, optimizer_.get(), epoch, options_.seed));
    history.push_back(stats);
    if (on_epoch) on_epoch(stats);
  }
  return history;
}

}  // namespace warpnet::nn
