#include "nn/trainer.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "autograd/functions.hpp"
#include "core/atomic_file.hpp"
#include "core/memory.hpp"
#include "core/timer.hpp"
#include "cpu/ops.hpp"
#include "device/backend.hpp"
#include "dist/communicator.hpp"
#include "nn/checkpoint.hpp"
#include "nn/precision_state.hpp"

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

// Rows [s.begin, s.end) of a contiguous (N, ...) tensor, copied.
Tensor rows_of(const Tensor& t, const Shard& s) {
  std::vector<int64_t> dims = t.shape().dims();
  const size_t row_bytes = static_cast<size_t>(dims[0] > 0 ? t.nbytes() / dims[0] : 0);
  dims[0] = s.size();
  Tensor out = Tensor::empty(Shape(dims), t.dtype());
  if (s.size() > 0) std::memcpy(out.raw(), static_cast<const char*>(t.raw()) + s.begin * row_bytes, s.size() * row_bytes);
  return out;
}

uint64_t fnv1a(const void* data, size_t n, uint64_t h = 1469598103934665603ull) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// A data set's fingerprint: its shape, its labels, and a strided sample of
// its inputs (a rank given other images with the same labels trains on
// them without a word: the gradients are averaged, so the weights agree).
uint64_t data_hash(const data::Dataset& d) {
  uint64_t h = fnv1a(d.labels.raw(), static_cast<size_t>(d.labels.nbytes()));
  const std::string shape = cat(d.inputs.shape(), '|', d.num_classes);
  h = fnv1a(shape.data(), shape.size(), h);
  const auto* bytes = static_cast<const unsigned char*>(d.inputs.raw());
  const int64_t n = d.inputs.nbytes(), stride = std::max<int64_t>(1, n / 4096);
  for (int64_t i = 0; i < n; i += stride) h = fnv1a(bytes + i, 1, h);
  return h;
}

// How a checkpoint's description of its training set goes on to name the
// contents: "fashion-mnist, 60000 examples, contents 1f0c...".
constexpr std::string_view kContents = ", contents ";

// What every rank must agree on before training together, field by field:
// the options that change the arithmetic or the collectives (a checkpoint
// adds a barrier after each epoch) and the data. Each field's hash; the
// first that differs between ranks is named.
std::vector<std::pair<const char*, uint64_t>> configuration(const TrainOptions& o, const data::Dataset& train,
                                                            const data::Dataset& test) {
  const auto text = [](const auto&... parts) {
    const std::string t = cat(parts...);
    return fnv1a(t.data(), t.size());
  };
  return {{"--model", text(o.model)},
          {"--optimizer (or --momentum, --weight-decay)", text(o.optimizer, '|', o.momentum, '|', o.weight_decay)},
          {"--lr", text(o.lr)},
          {"--batch-size", text(o.batch_size)},
          {"--epochs", text(o.epochs)},
          {"--seed", text(o.seed)},
          {"--bucket-kib", text(o.bucket_bytes)},
          {"--no-overlap", text(o.overlap)},
          {"--device", text(name_of(o.device))},
          {"--kernels", text(o.kernels)},
          {"--no-fold", text(o.fold_bias_relu)},
          {"--fused-step", text(o.fused_step)},
          {"--precision", text(ag::name_of(o.precision))},
          {"--loss-scale (or --loss-scale-growth)", text(o.loss_scale.initial_scale, '|', o.loss_scale.growth_interval)},
          {"the fp8 scaling (--fp8-window, --fp8-margin)", text(o.fp8.window, '|', o.fp8.margin)},
          {"--checkpoint (given on some ranks only)", text(o.checkpoint.empty())},
          {"the training data (--data, --data-dir, --limit)", data_hash(train)},
          {"the test data (--data, --data-dir, --limit)", data_hash(test)}};
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
  if (options_.precision != ag::Precision::fp32) {
    WN_CHECK(options_.device == Device::cpu, "train --precision ", ag::name_of(options_.precision),
             ": low precision is emulated by rounding tensors on the CPU backend; on emu and cuda each op runs at "
             "the precision of the kernel chosen (--kernels), so use --precision fp32 there");
    precision_ = std::make_unique<ag::MixedPrecision>(options_.precision, options_.fp8);
  }
  WN_CHECK(!options_.fused_step || options_.model == "lenet5", "train --fused-step: only LeNet-5 has a fused step "
           "(kernels/lenet5/), not --model ", options_.model);
  WN_CHECK(!options_.fused_step || options_.device != Device::cpu,
           "train --fused-step: the fused step is kernels (--device emu or cuda); the CPU runs the layers");
  WN_CHECK(!options_.fused_step || options_.graph != TrainOptions::Graph::off,
           "train --fused-step: the fused step runs as the graphed step (--graph on, or auto on --device cuda)");
  WN_CHECK(!options_.programmatic_launches || options_.graph != TrainOptions::Graph::off,
           "train --programmatic: how a captured step's kernels follow each other; there is no graph with --graph off");
  if (options_.precision == ag::Precision::fp16) scaler_ = std::make_unique<DynamicLossScaler>(options_.loss_scale);
  model_ = make_model(options_.model, example_shape(train_), train_.num_classes, options_.seed);
  if (options_.device != Device::cpu) {
    device::set_kernel_choice(options_.kernels);
    model_->to(options_.device);  // before the optimizer, whose state is made beside each parameter
    if (options_.fold_bias_relu) folded_relus_ = model_->fold_bias_relu();
  }
  optimizer_ = make_optimizer(options_.optimizer, model_->parameters(), options_.lr, options_.momentum,
                              options_.weight_decay);
  // Data-parallel: rank 0 alone reads the checkpoint and then hands its
  // state to the others, so ranks need not share a file system, and a run
  // resumes with any number of ranks (a checkpoint holds nothing per rank).
  const bool reads_checkpoint = !options_.data_parallel || dist::rank() == 0;
  if (options_.resume && !options_.checkpoint.empty() && reads_checkpoint &&
      path_exists(options_.checkpoint)) {
    Checkpoint ck = load_checkpoint(options_.checkpoint);
    WN_CHECK(ck.model == options_.model, options_.checkpoint, ": holds model '", ck.model, "', not '",
             options_.model, "'");
    // Each epoch's shuffle comes from the seed: another one would not give the uninterrupted run's batches.
    WN_CHECK(ck.seed == options_.seed, options_.checkpoint, ": written by a run with --seed ", ck.seed,
             ", resumed with --seed ", options_.seed, " (resume with --seed ", ck.seed, ")");
    // Nor would another training set (--data, --limit, --data-dir): epochs of
    // one set would be counted as the other's. Files written before
    // 2026-12-06 name the set and its size but not its contents.
    const std::string training_set = training_set_description();
    const bool unfingerprinted = ck.data.find(kContents) == std::string::npos;
    const bool same_set = ck.data.empty() || ck.data == training_set ||
                          (unfingerprinted && training_set.starts_with(ck.data + std::string(kContents)));
    WN_CHECK(same_set, options_.checkpoint, ": written by a run on ", ck.data, ", resumed on ", training_set,
             " (resume with the same --data, --data-dir and --limit)");
    check_resumed_settings(ck);
    try {
      restore(ck, *model_, optimizer_.get());
    } catch (const std::exception& e) {
      fail(options_.checkpoint, ": ", e.what());
    }
    restore_precision_state(ck, options_.checkpoint, options_.precision, precision_.get(), scaler_.get());
    start_epoch_ = static_cast<int>(ck.epoch);
  }
  if (options_.data_parallel) setup_data_parallel();
  if (options_.device != Device::cpu && !options_.data_parallel)
    resident_ = std::make_unique<DeviceDataset>(train_, options_.device);
  if (options_.graph != TrainOptions::Graph::off) setup_graph();
}

// The settings a checkpoint records beside the weights, as "train/<name>"
// (f64, one value; absent in files written before 2026-12-02).
std::vector<std::pair<std::string, double>> Trainer::recorded_settings() const {
  std::vector<std::pair<std::string, double>> settings{{"batch-size", double(options_.batch_size)},
                                                       {"lr", options_.lr}};
  if (options_.optimizer == "sgd") {  // Adam takes neither
    settings.emplace_back("momentum", options_.momentum);
    settings.emplace_back("weight-decay", options_.weight_decay);
  }
  // Where the sums run and in how many pieces: another count or device is
  // allowed, but changes the last bits, so the resumed run says so.
  settings.emplace_back("threads", double(cpu::num_threads()));
  settings.emplace_back("device", double(static_cast<int>(options_.device)));
  return settings;
}

// The batch size must be the checkpoint's: each epoch's batches, and the
// step numbers that seed dropout's masks, follow from it, so another one
// would not continue the uninterrupted run. A changed learning rate,
// momentum or weight decay is a choice (a schedule by hand): it applies from
// the resumed epoch on, and the run says so. So does another thread count
// or device: allowed, but the sums split or run differently from there, and
// the run ends bit for bit as neither uninterrupted run would.
void Trainer::check_resumed_settings(const Checkpoint& ck) {
  for (const auto& [name, value] : recorded_settings()) {
    auto it = ck.tensors.find("train/" + name);
    if (it == ck.tensors.end()) continue;
    WN_CHECK(it->second.dtype() == DType::f64 && it->second.numel() == 1, options_.checkpoint,
             ": malformed setting 'train/", name, "'");
    const double saved = it->second.data<double>()[0];
    WN_CHECK(std::isfinite(saved) && saved >= 0, options_.checkpoint, ": setting 'train/", name, "' is ", saved,
             ", which no run sets (damaged or forged)");
    if (saved == value) continue;
    WN_CHECK(name != "batch-size", options_.checkpoint, ": written by a run with --batch-size ", saved,
             ", resumed with --batch-size ", value, " (resume with --batch-size ", saved,
             ": each epoch's batches and dropout masks follow from it)");
    if (name == "device") {
      WN_CHECK(saved == std::floor(saved) && saved <= double(static_cast<int>(Device::cuda)), options_.checkpoint,
               ": setting 'train/device' is ", saved, ", which no run sets (damaged or forged)");
      changed_on_resume_.push_back(cat("--device ", name_of(options_.device), " (the checkpoint's run: ",
                                       name_of(static_cast<Device>(int(saved))),
                                       "): the sums run in another order, so the last bits differ from either "
                                       "uninterrupted run's"));
    } else if (name == "threads") {
      changed_on_resume_.push_back(cat("--threads ", value, " (the checkpoint's run: ", saved,
                                       "): the sums split differently, so the last bits differ from either "
                                       "uninterrupted run's"));
    } else {
      changed_on_resume_.push_back(cat("--", name, " ", value, " (the checkpoint's run: ", saved, ")"));
    }
  }
}

std::string Trainer::training_set_description() const {
  char fingerprint[17];
  std::snprintf(fingerprint, sizeof fingerprint, "%016llx", static_cast<unsigned long long>(data_hash(train_)));
  return cat(train_.name, ", ", train_.size(), " examples", kContents, fingerprint);
}

void Trainer::setup_graph() {
  std::string why;
  if (options_.device == Device::cpu)
    why = "graphs capture kernel launches, and the CPU backend runs none (use --device emu or cuda)";
  else if (options_.data_parallel)
    why = "not combined with --data-parallel yet";
  if (!why.empty()) {
    WN_CHECK(options_.graph != TrainOptions::Graph::on, "train --graph on: ", why);
    WN_CHECK(!options_.fused_step, "train --fused-step: the fused step runs as the graphed step, and here there is "
             "none: ", why);
    WN_CHECK(!options_.programmatic_launches, "train --programmatic: a captured step's launches, and here there is "
             "no graph: ", why);
    graph_note_ = why;
    return;
  }
  const Shape example = example_shape(train_);
  std::vector<int64_t> batch_dims{options_.batch_size};
  for (int64_t d : example.dims()) batch_dims.push_back(d);
  graphed_ = std::make_unique<GraphedStep>(*model_, *optimizer_, *resident_, Shape(batch_dims),
                                           GraphedStep::Options{options_.fused_step, options_.programmatic_launches});
}

void Trainer::setup_data_parallel() {
  WN_CHECK(dist::active(), "train: data-parallel training needs MPI started first (a dist::Session; "
           "`warpnet train --data-parallel` makes one), under mpirun -np N");
  fault_ = parse_fault(options_.inject_fault);
  dist::set_activity("the check that every rank runs the same configuration");
  // Every rank takes part in every gather, whatever it finds: the fields in
  // one order, so that all of them name the same first difference.
  for (const auto& [what, hash] : configuration(options_, train_, test_)) {
    const std::vector<uint64_t> hashes = dist::allgather(hash);
    for (size_t r = 1; r < hashes.size(); ++r)
      WN_CHECK(hashes[r] == hashes[0], "train --data-parallel: rank ", r, " differs from rank 0 in ", what, ": ",
               "every rank must run the same command");
  }
  int64_t epoch = start_epoch_;
  dist::broadcast(&epoch, sizeof epoch);
  start_epoch_ = static_cast<int>(epoch);
  broadcast_training_state(*model_, *optimizer_);
  const auto& layers = model_->layers();
  std::vector<std::string> layer_names;
  for (const auto& layer : layers) layer_names.push_back(layer->name());
  broadcast_precision_state(precision_.get(), scaler_.get(), layer_names);
  if (options_.precision == ag::Precision::fp8) fp8_sharing_ = std::make_unique<Fp8AmaxSharing>(layer_names);
  std::vector<Parameter*> params;
  std::vector<int> layer_of;
  for (size_t k = 0; k < layers.size(); ++k)
    for (Parameter* p : layers[k]->parameters()) {
      params.push_back(p);
      layer_of.push_back(static_cast<int>(k));
    }
  buckets_ = std::make_unique<GradientBuckets>(params, layer_of, options_.bucket_bytes, options_.overlap);
  const Shard s = shard_of(test_.size(), dist::rank(), dist::size());
  if (s.size() > 0) {
    test_shard_ = test_;
    test_shard_.name = cat(test_.name, "[", s.begin, ":", s.end, "]");
    test_shard_.inputs = rows_of(test_.inputs.contiguous(), s);
    test_shard_.labels = rows_of(test_.labels.contiguous(), s);
  }
}

StepOutcome Trainer::eager_step(const data::Batch& batch, int epoch, int64_t index, int64_t step) {
  model_->prepare_step(options_.device, {step, 0});
  ag::Tape tape;
  ag::TapeScope recording(tape);
  Tensor probs;
  ag::Var logits = (*model_)(ag::Var(batch.inputs.to(options_.device)));
  MemoryScope loss_scope(MemTag::activation, "loss");
  ag::Var loss = ag::softmax_cross_entropy(logits, batch.labels.to(options_.device), &probs);
  const double value = loss.value().item(0);
  check_loss(value, epoch, index);
  optimizer_->zero_grad();
  // fp16: backward from the loss times the scale; the step is skipped
  // when a gradient overflowed (nn/loss_scaler.hpp).
  tape.backward(loss, scaler_ ? scaler_->scale() : 1.0);
  if (!scaler_ || scaler_->unscale_or_skip(model_->parameters())) optimizer_->step();
  return {value, probs.to(Device::cpu)};
}

// How often, at most, an epoch with a captured step reads its queued
// steps back to report progress: in between, the host queues steps without
// waiting for the device (nn/graphed_step.hpp). A bad loss is caught at the
// next read, so a run that diverges stops within this long of the step.
constexpr double kGraphedReportSeconds = 0.25;

Trainer::EpochSums Trainer::train_epoch(int epoch, const OnStep& on_step) {
  data::Batches batches(train_, options_.batch_size, true, options_.seed * 1000003ull + uint64_t(epoch));
  std::vector<std::span<const int64_t>> epoch_rows;  // the epoch's batches, views of `batches`' order
  for (std::span<const int64_t> rows = batches.next_rows(); !rows.empty(); rows = batches.next_rows())
    epoch_rows.push_back(rows);
  // Steps are numbered on from the epochs before (a resumed run's too).
  const int64_t first_step = int64_t(epoch - 1) * int64_t(epoch_rows.size());
  const auto full = [&](std::span<const int64_t> rows) { return int64_t(rows.size()) == options_.batch_size; };
  if (graphed_) {  // every full batch's row numbers to the device at once
    std::vector<int64_t> rows;
    for (std::span<const int64_t> batch : epoch_rows)
      if (full(batch)) rows.insert(rows.end(), batch.begin(), batch.end());
    if (!rows.empty()) graphed_->start_epoch(resident_->indices_of(rows));
  }

  double loss_sum = 0;
  int64_t seen = 0, correct = 0, index = 0, graphed = 0;
  Timer timer;
  double last_read = 0;  // when the queued steps were last read back
  // on_step after every step, in order; a replayed step's when it is read.
  const auto report = [&](int64_t steps_done) {
    if (on_step)
      on_step({epoch, steps_done, batches.count(), loss_sum / double(seen), double(correct) / double(seen),
               double(seen) / std::max(timer.seconds(), 1e-9)});
  };
  const auto account = [&](const StepOutcome& step, std::span<const int64_t> rows) {
    loss_sum += step.loss * double(rows.size());
    correct += count_correct(step.probs, data::gather_rows(train_.labels, rows));  // the labels on the host
    seen += int64_t(rows.size());
  };
  // The replayed steps queued and not yet read, with their batch numbers:
  // read in order, so the sums add up as in an epoch without a graph. A
  // replayed step has updated the weights already: a bad loss stops the run
  // after the step rather than before it.
  std::vector<int64_t> queued;
  const auto read_queued = [&] {
    if (queued.empty()) return;
    const std::vector<StepOutcome> done = graphed_->finished();
    for (size_t k = 0; k < done.size(); ++k) {
      check_loss(done[k].loss, epoch, queued[k]);
      account(done[k], epoch_rows[size_t(queued[k])]);
      report(queued[k] + 1);
    }
    queued.clear();
    last_read = timer.seconds();
  };
  {
    MemoryScope batch_scope(MemTag::other, "batch");  // the copied-out inputs
    ag::PrecisionScope precision(precision_.get());  // null: fp32
    for (; index < int64_t(epoch_rows.size());) {
      const std::span<const int64_t> rows = epoch_rows[size_t(index)];
      if (graphed_ && full(rows)) {
        graphed_->train(graphed++, first_step + index);
        queued.push_back(index++);
        if (timer.seconds() - last_read >= kGraphedReportSeconds) read_queued();
        continue;
      }
      read_queued();  // the steps before this one first
      StepOutcome step{};
      if (!resident_) {
        step = eager_step({data::gather_rows(train_.inputs, rows), data::gather_rows(train_.labels, rows)}, epoch,
                          index, first_step + index);
      } else {
        step = eager_step(resident_->batch(resident_->indices_of(rows).to(options_.device)), epoch, index,
                          first_step + index);
      }
      account(step, rows);
      report(++index);
    }
    read_queued();
  }
  return {loss_sum, correct, seen, timer.seconds()};
}

// One epoch on this rank's shards. Every rank draws the same global batches
// (same seed), takes its rows, runs forward and backward with a marker
// before each layer (nn/data_parallel.hpp: the marker of layer k runs once
// layers k.. have their gradients), and steps its optimizer on the summed
// gradients, identically on every rank.
Trainer::EpochSums Trainer::train_epoch_data_parallel(int epoch, const OnStep& on_step) {
  data::Batches batches(train_, options_.batch_size, true, options_.seed * 1000003ull + uint64_t(epoch));
  const auto& layers = model_->layers();
  data::Batch batch;
  double loss_sum = 0;
  int64_t seen = 0, correct = 0, index = 0;
  Timer timer;
  {
    MemoryScope batch_scope(MemTag::other, "batch");
    ag::PrecisionScope precision(precision_.get());  // null: fp32
    while (batches.next(batch)) {
      const int64_t global = batch.labels.dim(0);
      const Shard shard = shard_of(global, dist::rank(), dist::size());
      maybe_inject(fault_, optimizer_->steps() + 1);
      dist::set_activity(cat("the gradient all-reduce of epoch ", epoch, " step ", index + 1));
      buckets_->begin_step();
      if (fp8_sharing_) fp8_sharing_->begin_step(*precision_);
      optimizer_->zero_grad();
      double local[2] = {0, 0};  // this shard's Σ loss·rows and correct predictions
      if (shard.size() > 0) {
        const Tensor labels = rows_of(batch.labels, shard);
        // The step's number as in one process; the shard's rows draw their
        // part of the whole batch's dropout mask (nn::Dropout).
        model_->prepare_step(options_.device, {int64_t(epoch - 1) * batches.count() + index, shard.begin});
        ag::Tape tape;
        ag::TapeScope recording(tape);
        ag::Var h(rows_of(batch.inputs, shard).to(options_.device));
        for (size_t k = 0; k < layers.size(); ++k) {
          tape.record([this, k] { buckets_->layers_done_from(static_cast<int>(k)); });
          h = (*layers[k])(h);
        }
        Tensor probs;
        MemoryScope loss_scope(MemTag::activation, "loss");
        ag::Var loss = ag::softmax_cross_entropy(h, labels.to(options_.device), &probs);
        local[0] = loss.value().item(0) * double(shard.size());
        local[1] = double(count_correct(probs.to(Device::cpu), labels));
        // The shard's mean loss weighs b_r/B of the batch's (nn/data_parallel.hpp);
        // fp16: times the loss scale.
        tape.backward(loss, (scaler_ ? scaler_->scale() : 1.0) * double(shard.size()) / double(global));
      }
      buckets_->finish();
      if (fp8_sharing_) fp8_sharing_->finish_step(*precision_);
      dist::set_activity(cat("the loss all-reduce of epoch ", epoch, " step ", index + 1));
      dist::allreduce_sum(local, 2);
      check_loss(local[0] / double(global), epoch, index);
      // fp16: every rank holds the same summed gradients, so all take or skip the step alike.
      if (!scaler_ || scaler_->unscale_or_skip(model_->parameters())) optimizer_->step();
      loss_sum += local[0];
      correct += static_cast<int64_t>(local[1]);
      seen += global;
      ++index;
      if (on_step)
        on_step({epoch, index, batches.count(), loss_sum / double(seen), double(correct) / double(seen),
                 double(seen) / std::max(timer.seconds(), 1e-9)});
    }
  }
  return {loss_sum, correct, seen, timer.seconds()};
}

// Evaluate at the training batch size so the memory peaks stay those of
// training. Data-parallel: each rank its rows of the test set, then the sums.
EvalResult Trainer::evaluate_test_set() {
  if (test_.size() == 0) return {};
  ag::PrecisionScope precision(precision_.get());  // the model is tested in the precision it trains in
  if (!options_.data_parallel) return evaluate(*model_, test_, options_.batch_size);
  dist::set_activity("the evaluation all-reduce");
  double sums[2] = {0, 0};  // Σ loss·rows, correct predictions
  if (test_shard_.size() > 0) {
    const EvalResult r = evaluate(*model_, test_shard_, options_.batch_size);
    const double n = double(test_shard_.size());
    sums[0] = r.loss * n;
    sums[1] = std::round(r.accuracy * n);
  }
  dist::allreduce_sum(sums, 2);
  return {sums[0] / double(test_.size()), sums[1] / double(test_.size())};
}

std::string Trainer::diverged(const std::string& what, int epoch) const {
  std::string kept;  // what the checkpoint file holds, this epoch's not written
  if (!options_.checkpoint.empty())
    kept = epoch > 1 ? cat("; ", options_.checkpoint, " keeps the checkpoint of epoch ", epoch - 1)
                     : "; no checkpoint was written";
  return cat("train: ", what, " (learning rate ", options_.lr, " too high?)", kept);
}

void Trainer::check_loss(double loss, int epoch, int64_t index) const {
  if (!std::isfinite(loss)) fail(diverged(cat("the loss became ", loss, " at epoch ", epoch, ", batch ", index + 1), epoch));
}

std::vector<EpochStats> Trainer::run(const OnStep& on_step, const OnEpoch& on_epoch) {
  std::vector<EpochStats> history;
  // Each epoch's shuffle comes from (seed, epoch) and each step's dropout
  // masks from its number, so a resumed run sees the same batches and masks
  // the uninterrupted run would have.
  for (int epoch = start_epoch_ + 1; epoch <= options_.epochs; ++epoch) {
    model_->set_training(true);
    EpochSums t;
    try {
      t = options_.data_parallel ? train_epoch_data_parallel(epoch, on_step) : train_epoch(epoch, on_step);
    } catch (const std::exception& e) {
      // A rank's error ends the job here, while the gradient buckets still
      // exist: unwound, they would wait for all-reduces the other ranks
      // never join, and a timeout message would replace this one.
      if (options_.data_parallel && dist::size() > 1) dist::abort_job(cat("error: ", e.what()));
      throw;
    }
    const EvalResult test = evaluate_test_set();
    // Every batch's loss can be finite while the weights the last step left
    // are not fit to use: a test loss of NaN here, and a resumed run's first
    // batch would stop at it. The same on every rank (an all-reduced sum).
    if (test_.size() > 0 && !std::isfinite(test.loss))
      fail(diverged(cat("the test loss became ", test.loss, " after epoch ", epoch), epoch));
    EpochStats stats{epoch, t.loss_sum / double(t.seen), double(t.correct) / double(t.seen), test.loss, test.accuracy,
                     t.seconds, double(t.seen) / t.seconds};
    if (options_.data_parallel) {
      // Identical updates of identical weights: any difference is a bug.
      dist::set_activity(cat("the weight check after epoch ", epoch));
      const std::vector<uint64_t> prints = dist::allgather(weights_fingerprint(*model_));
      for (size_t r = 1; r < prints.size(); ++r)
        WN_CHECK(prints[r] == prints[0], "train --data-parallel: after epoch ", epoch, " rank ", r,
                 "'s weights differ from rank 0's: the ranks did not apply the same gradients");
    }
    if (!options_.checkpoint.empty() && (!options_.data_parallel || dist::rank() == 0)) {
      dist::set_activity(cat("writing the checkpoint of epoch ", epoch));
      Checkpoint ck = capture(options_.model, *model_, optimizer_.get(), epoch, options_.seed,
                              training_set_description());
      save_precision_state(ck, options_.precision, precision_.get(), scaler_.get());
      for (const auto& [name, value] : recorded_settings())
        ck.tensors["train/" + name] = Tensor::from<double>({1}, {value});
      // A value that overflowed (Adam's second moments first) while every
      // loss stayed finite: a checkpoint holding it is one --resume refuses,
      // so it must not replace the last one that can be resumed.
      if (const std::string bad = first_nonfinite(ck); !bad.empty()) {
        const std::string why = diverged(cat("after epoch ", epoch, " ", bad), epoch);
        if (options_.data_parallel && dist::size() > 1) dist::abort_job(cat("error: ", why));  // the others wait below
        fail(why);
      }
      save_checkpoint(options_.checkpoint, ck);
    }
    if (!options_.checkpoint.empty() && options_.data_parallel) {
      // The other ranks wait here, saying for what, rather than in the next
      // epoch's first all-reduce, whose timeout would blame a hung rank 0.
      dist::set_activity(cat("waiting for rank 0's checkpoint of epoch ", epoch));
      dist::barrier();
    }
    history.push_back(stats);
    if (on_epoch) on_epoch(stats);
  }
  return history;
}

}  // namespace warpnet::nn
