// Training on the emulator backend: the same model, data and seed trained on
// the CPU (Eigen) and on Device::emu (warpnet's kernels, emulated). Both
// compute in fp32 and differ only in the order of their sums. One step's
// gradients are compared tensor by tensor against a derived bound (at the
// end of this file); the losses of a few steps, a check of the trajectory
// (state carried between steps, the optimizer on the device), agree to
// about 1e-6 relative and are held to 1e-4 — not derived, and too loose to
// see a gradient 20% off under SGD (the gradient check sees 1%).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <tuple>

#include "core/device_memory.hpp"
#include "datasets/synthetic.hpp"
#include "device_buffer.hpp"
#include "nn/device_dataset.hpp"
#include "nn/graphed_step.hpp"
#include "nn/models.hpp"
#include "nn/optim.hpp"
#include "nn/trainer.hpp"
#include "tests/graph_checks.hpp"

using namespace warpnet;

namespace {

struct Run {
  std::vector<double> losses;  // running mean loss after each step
  nn::EpochStats epoch{};
};

Run train(nn::TrainOptions options, Device device, const data::Dataset& train, const data::Dataset& test) {
  options.device = device;
  nn::Trainer trainer(options, train, test);
  Run run;
  const auto history = trainer.run([&](const nn::StepProgress& s) { run.losses.push_back(s.loss); });
  run.epoch = history.at(0);
  return run;
}

void check_same_losses(const nn::TrainOptions& options, int64_t examples) {
  const data::Dataset train_set = data::make_squares(examples, 10, 28, 11), test_set = data::make_squares(8, 10, 28, 12);
  const Run cpu = train(options, Device::cpu, train_set, test_set);
  const Run emu = train(options, Device::emu, train_set, test_set);
  REQUIRE(cpu.losses.size() == emu.losses.size());
  for (size_t i = 0; i < cpu.losses.size(); ++i) {
    INFO(options.model, " step ", i + 1);
    CHECK(emu.losses[i] == doctest::Approx(cpu.losses[i]).epsilon(1e-4));
  }
  CHECK(emu.epoch.test_loss == doctest::Approx(cpu.epoch.test_loss).epsilon(1e-4));
  CHECK(emu.epoch.train_accuracy == cpu.epoch.train_accuracy);
}

}  // namespace

TEST_CASE("train emu: LeNet-5 on the emulator's kernels follows the CPU's losses, step by step (SGD)") {
  nn::TrainOptions o;
  o.model = "lenet5";
  o.batch_size = 8;
  o.optimizer = "sgd";
  o.lr = 0.05;
  check_same_losses(o, 32);
}

TEST_CASE("train emu --fused-step: LeNet-5's step in two kernels follows the CPU's losses, step by step (Adam)") {
  SUBCASE("ordered launches") { graph_checks::fused_step_follows_cpu(Device::emu, false); }
  SUBCASE("programmatic dependent launches") { graph_checks::fused_step_follows_cpu(Device::emu, true); }
}

TEST_CASE("train --fused-step, --programmatic: refused for another model, and without the graphed step they need") {
  const data::Dataset train_set = data::make_squares(8, 10, 28, 31), test_set = data::make_squares(4, 10, 28, 32);
  nn::TrainOptions o;
  o.batch_size = 4;
  o.device = Device::emu;
  o.fused_step = true;
  o.graph = nn::TrainOptions::Graph::on;
  o.model = "alexnet";
  CHECK_THROWS_WITH_AS(nn::Trainer(o, train_set, test_set), doctest::Contains("only LeNet-5 has a fused step"), Error);
  o.model = "lenet5";
  o.graph = nn::TrainOptions::Graph::off;
  CHECK_THROWS_WITH_AS(nn::Trainer(o, train_set, test_set), doctest::Contains("runs as the graphed step"), Error);
  o.fused_step = false;
  o.programmatic_launches = true;
  CHECK_THROWS_WITH_AS(nn::Trainer(o, train_set, test_set), doctest::Contains("there is no graph with --graph off"),
                       Error);
  o.programmatic_launches = false;
  o.fused_step = true;
  o.device = Device::cpu;
  o.graph = nn::TrainOptions::Graph::when_possible;
  CHECK_THROWS_WITH_AS(nn::Trainer(o, train_set, test_set), doctest::Contains("the CPU runs the layers"), Error);
  o.device = Device::emu;
  o.graph = nn::TrainOptions::Graph::on;
  nn::Trainer fused(o, train_set, test_set);
  fused.run();
  REQUIRE(fused.graphed_step() != nullptr);
  CHECK(fused.graphed_step()->fused());
  // Two gathers, the step's two kernels, its workspace's allocation and
  // release (the emulator's), the update: the layers' step has some 40.
  CHECK(fused.graphed_step()->nodes() == 7);
}

TEST_CASE("train emu: mini-AlexNet (dropout, 3x3 convolutions) follows the CPU too (Adam)") {
  nn::TrainOptions o;
  o.model = "alexnet";
  o.batch_size = 4;
  o.optimizer = "adam";
  o.lr = 1e-3;
  check_same_losses(o, 8);
}

// The emulator in its deterministic mode (one worker, blocks in order), so
// the two runs may be compared bit for bit (tests/graph_checks.hpp).
TEST_CASE("train emu --graph: replaying the captured step equals training without it, bit for bit") {
  DeterministicScope deterministic;
  SUBCASE("LeNet-5, two epochs") { graph_checks::replay_equals_eager(Device::emu, "lenet5", 8, 2); }
  // Dropout: each replay must draw the seed the host wrote before it.
  SUBCASE("mini-AlexNet (dropout)") { graph_checks::replay_equals_eager(Device::emu, "alexnet", 4, 1); }
}

TEST_CASE("train emu: a ReLU folded into its layer trains bit for bit as the two ops, in fewer launches and bytes") {
  DeterministicScope deterministic;
  // conv1's product: LeNet-5 6x28x28, mini-AlexNet 32x28x28 values per image.
  SUBCASE("LeNet-5: conv1, conv2, fc1, fc2") {
    graph_checks::folded_equals_unfolded(Device::emu, "lenet5", 8, 4, 6 * 28 * 28);
  }
  SUBCASE("mini-AlexNet: five convolutions, two linear layers") {
    graph_checks::folded_equals_unfolded(Device::emu, "alexnet", 4, 7, 32 * 28 * 28);
  }
}

TEST_CASE("train --graph: refused where there is nothing to capture, skipped with the reason where possible") {
  const data::Dataset train_set = data::make_squares(4, 10, 28, 31), test_set = data::make_squares(4, 10, 28, 32);
  nn::TrainOptions o;
  o.model = "lenet5";
  o.batch_size = 4;
  o.device = Device::cpu;
  o.graph = nn::TrainOptions::Graph::on;
  CHECK_THROWS_WITH_AS(nn::Trainer(o, train_set, test_set), doctest::Contains("the CPU backend runs none"), Error);
  o.graph = nn::TrainOptions::Graph::when_possible;
  nn::Trainer trainer(o, train_set, test_set);
  CHECK(trainer.graphed_step() == nullptr);
  CHECK(trainer.graph_note().find("the CPU backend runs none") != std::string::npos);
}

TEST_CASE("train emu: a batch gathered from the training set on the device equals the host's copy of its rows") {
  const data::Dataset set = data::make_squares(37, 10, 28, 5);
  const nn::DeviceDataset on_emu(set, Device::emu);
  const std::vector<int64_t> rows = {36, 0, 7, 7, 20};  // any order, repeats
  const data::Batch got = on_emu.batch(on_emu.indices_of(rows).to(Device::emu));
  const Tensor inputs = got.inputs.to(Device::cpu), labels = got.labels.to(Device::cpu);
  const Tensor want_inputs = data::gather_rows(set.inputs, rows), want_labels = data::gather_rows(set.labels, rows);
  REQUIRE(inputs.shape() == want_inputs.shape());
  CHECK(std::memcmp(inputs.raw(), want_inputs.raw(), size_t(want_inputs.nbytes())) == 0);
  CHECK(std::memcmp(labels.raw(), want_labels.raw(), size_t(want_labels.nbytes())) == 0);
  const std::vector<int64_t> bad = {3, 37};
  CHECK_THROWS_WITH(on_emu.indices_of(bad), doctest::Contains("row 37 of a batch is outside the set's 37 rows"));
}

TEST_CASE("optimizer on emu: a learning rate changed between steps reaches the device's copy of it") {
  // SGD skips the upload of hyperparameters that did not change; one that did
  // must still arrive. Three steps at 0.1, 0.1 and 0.01 on the CPU and on emu.
  const Tensor w0 = Tensor::from<float>({5}, {1, -2, 3, 0.5f, -1}), g = Tensor::from<float>({5}, {0.5f, 1, -1, 2, 4});
  std::vector<Tensor> after;
  for (Device device : {Device::cpu, Device::emu}) {
    nn::Parameter p{"w", ag::Var(w0.clone().to(device), true, "w")};
    nn::Sgd sgd({&p}, 0.1, 0.9);
    for (double lr : {0.1, 0.1, 0.01}) {
      sgd.set_lr(lr);
      p.var.grad() = g.to(device);
      sgd.step();
    }
    after.push_back(p.var.value().to(Device::cpu));
  }
  // w: 1 − 0.1·0.5 − 0.1·(0.9·0.5 + 0.5) − 0.01·(0.9·0.95 + 0.5) = 0.841450 for the first element.
  CHECK(after[0].item(0) == doctest::Approx(0.84145).epsilon(1e-6));
  for (int64_t i = 0; i < 5; ++i) CHECK(after[1].item(i) == doctest::Approx(after[0].item(i)).epsilon(1e-6));
}

TEST_CASE("tensor on emu: a copy between two buffers of the device stays on it, row ranges included") {
  const Tensor host = Tensor::from<float>({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Tensor src = host.to(Device::emu);
  Tensor dst = Tensor::zeros({3, 2}).to(Device::emu);
  dst.rows(1, 2).copy_from(src.rows(2, 2));  // rows 2..3 of src into rows 1..2 of dst
  const Tensor got = dst.to(Device::cpu);
  const std::vector<double> want = {0, 0, 4, 5, 6, 7};
  for (int64_t i = 0; i < 6; ++i) CHECK(got.item(i) == want[size_t(i)]);
}

TEST_CASE("train emu --graph: steps queued and read at once equal steps read one by one") {
  // The trainer reads queued steps back every so often (nn/trainer.cpp);
  // here the same four batches are read once at the end and after every
  // step, from two identical models: the same losses, softmax and weights.
  const int64_t batch = 4;
  const data::Dataset set = data::make_squares(4 * batch + 3, 10, 28, 31);
  std::vector<int64_t> rows(size_t(4 * batch));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = int64_t((i * 7 + 3) % size_t(set.size()));
  struct Setup {
    std::unique_ptr<nn::Sequential> model;
    std::unique_ptr<nn::Optimizer> optimizer;
    std::unique_ptr<nn::DeviceDataset> data;
    std::unique_ptr<nn::GraphedStep> step;
  };
  const auto setup = [&] {
    Setup s;
    s.model = nn::make_model("lenet5", {1, 28, 28}, set.num_classes, 7);
    s.model->to(Device::emu);
    s.optimizer = nn::make_optimizer("adam", s.model->parameters(), 1e-3);
    s.data = std::make_unique<nn::DeviceDataset>(set, Device::emu);
    s.step = std::make_unique<nn::GraphedStep>(*s.model, *s.optimizer, *s.data, Shape{batch, 1, 28, 28},
                                               nn::GraphedStep::Options{});
    s.step->start_epoch(s.data->indices_of(rows));
    return s;
  };
  Setup queued = setup(), one_by_one = setup();
  // The first step runs as is, the second is captured; the replays after
  // them copy nothing to or from the host: on the device, the batch's row
  // numbers in, Adam's step size from its table, the losses and softmax out.
  queued.step->train(0, 0);
  queued.step->train(1, 1);
  const TransferCounts before = transfer_counts();
  queued.step->train(2, 2);
  queued.step->train(3, 3);
  const TransferCounts after = transfer_counts();
  CHECK(after.to_device == before.to_device);
  CHECK(after.to_host == before.to_host);
  CHECK(after.within - before.within == 2 * 4);
  std::vector<nn::StepOutcome> each;
  for (int64_t b = 0; b < 4; ++b) {
    one_by_one.step->train(b, b);
    for (nn::StepOutcome& o : one_by_one.step->finished()) each.push_back(std::move(o));
  }
  CHECK_THROWS_WITH(queued.step->start_epoch(queued.data->indices_of(rows)),
                    doctest::Contains("a new epoch with 4 steps of the last one unread"));
  const int64_t read_before = transfer_counts().to_host;
  const std::vector<nn::StepOutcome> at_once = queued.step->finished();
  CHECK(transfer_counts().to_host - read_before == 2);  // the queued steps' losses and softmax, read at once
  CHECK(queued.step->finished().empty());  // read once
  REQUIRE(at_once.size() == 4);
  REQUIRE(each.size() == 4);
  for (size_t k = 0; k < 4; ++k) {
    INFO("step ", k + 1);
    CHECK(at_once[k].loss == each[k].loss);
    REQUIRE(at_once[k].probs.shape() == Shape{batch, 10});
    CHECK(std::memcmp(at_once[k].probs.contiguous().raw(), each[k].probs.contiguous().raw(), 4 * 10 * 4) == 0);
  }
  CHECK(at_once[0].loss != at_once[3].loss);  // the steps trained: the outcomes are not one step's, repeated
  CHECK(nn::weights_fingerprint(*queued.model) == nn::weights_fingerprint(*one_by_one.model));
  CHECK(queued.step->nodes() > 40);  // captured at the second step, replayed from then on
  CHECK_THROWS_WITH(queued.step->train(7, 7), doctest::Contains("batch 7 asked for, where batch 4 of 4 comes next"));
}

TEST_CASE("optimizer on emu: queued steps read Adam's step sizes from the table on the device, refilled as needed") {
  // 150 Adam steps, the rate changed at step 100: the table of 64 steps'
  // values runs out twice and is made again once for the new rate. Queued
  // (a replayed graph's way) the weights equal those of steps each
  // uploading their own values, bit for bit, and the CPU's within float
  // rounding.
  const Tensor w0 = Tensor::from<float>({5}, {1, -2, 3, 0.5f, -1}), g = Tensor::from<float>({5}, {0.5f, 1, -1, 2, 4});
  std::vector<Tensor> after;
  for (const auto& [device, queued] : {std::pair{Device::cpu, false}, {Device::emu, false}, {Device::emu, true}}) {
    nn::Parameter p{"w", ag::Var(w0.clone().to(device), true, "w")};
    nn::Adam adam({&p}, 1e-2);
    for (int step = 1; step <= 150; ++step) {
      if (step == 100) adam.set_lr(3e-3);
      p.var.grad() = g.to(device);
      adam.prepare_step(queued);
      adam.apply_step();
    }
    after.push_back(p.var.value().to(Device::cpu));
  }
  CHECK(std::memcmp(after[1].raw(), after[2].raw(), 5 * sizeof(float)) == 0);
  for (int64_t i = 0; i < 5; ++i) CHECK(after[2].item(i) == doctest::Approx(after[0].item(i)).epsilon(1e-5));
  CHECK(after[2].item(0) != doctest::Approx(1.0).epsilon(1e-3));  // the weights moved
}

TEST_CASE("dropout on emu: seeds drawn ahead for queued steps are each step's, mixed with unqueued steps") {
  // Two layers of one seed: one prepared queued at every step but every
  // 7th (as a trainer's eager last batch), one never queued; 150 steps run
  // through two tables of 64 seeds and a third, from step 10 on (a resumed
  // run's numbers). Every step drops the same units in both, and a step's
  // mask is its number's: step 40 again, out of order, drops what it did.
  const Tensor x = Tensor::full({4, 33}, 1.0).to(Device::emu);
  nn::Dropout queued("drop", 0.5, 99), unqueued("drop", 0.5, 99);
  queued.set_training(true);
  unqueued.set_training(true);
  int differing = 0, changed = 0;
  Tensor last, at_40;
  for (int64_t step = 10; step < 160; ++step) {
    queued.prepare_step(Device::emu, {step, 0}, step % 7 != 0);
    unqueued.prepare_step(Device::emu, {step, 0}, false);
    const Tensor a = queued(ag::Var(x)).value().to(Device::cpu), b = unqueued(ag::Var(x)).value().to(Device::cpu);
    differing += std::memcmp(a.raw(), b.raw(), size_t(a.nbytes())) != 0;
    if (last.defined()) changed += std::memcmp(a.raw(), last.raw(), size_t(a.nbytes())) != 0;
    last = a;
    if (step == 40) at_40 = a;
  }
  CHECK(differing == 0);
  CHECK(changed == 149);  // a new mask every step
  queued.prepare_step(Device::emu, {40, 0}, true);
  const Tensor again = queued(ag::Var(x)).value().to(Device::cpu);
  CHECK(std::memcmp(again.raw(), at_40.raw(), size_t(again.nbytes())) == 0);
  // A data-parallel shard on the device (rows 1..3 of the batch): the CPU's
  // whole-batch mask in those rows.
  nn::Dropout on_cpu("drop", 0.5, 99), shard("drop", 0.5, 99);
  on_cpu.set_training(true);
  shard.set_training(true);
  on_cpu.prepare_step(Device::cpu, {12, 0});
  shard.prepare_step(Device::emu, {12, 1});
  const Tensor whole = on_cpu(ag::Var(Tensor::full({4, 33}, 1.0))).value();
  const Tensor rows = shard(ag::Var(x.rows(1, 3).contiguous())).value().to(Device::cpu);
  CHECK(std::memcmp(rows.raw(), whole.rows(1, 3).contiguous().raw(), size_t(rows.nbytes())) == 0);
}

namespace {

// One training step's gradients of every parameter of `model_name`, from the
// same weights (the model's seed) and batch, on `device`, in parameter order.
std::vector<std::pair<std::string, Tensor>> one_step_gradients(const std::string& model_name, Device device,
                                                               const data::Dataset& set, int64_t batch) {
  auto model = nn::make_model(model_name, {1, 28, 28}, set.num_classes, 5);
  model->to(device);
  model->set_training(true);
  model->prepare_step(device, nn::Module::Step{1, 0});
  std::vector<int64_t> rows(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; ++i) rows[size_t(i)] = i;
  const Tensor x = data::gather_rows(set.inputs, rows).to(device), y = data::gather_rows(set.labels, rows).to(device);
  ag::Tape tape;
  ag::TapeScope recording(tape);
  ag::Var loss = ag::softmax_cross_entropy((*model)(ag::Var(x)), y);
  tape.backward(loss);
  std::vector<std::pair<std::string, Tensor>> grads;
  for (nn::Parameter* p : model->parameters()) grads.emplace_back(p->name, p->var.grad().to(Device::cpu));
  return grads;
}

double relative_difference(const Tensor& got, const Tensor& want) {
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    diff += std::pow(got.item(i) - want.item(i), 2);
    norm += std::pow(want.item(i), 2);
  }
  return std::sqrt(diff / norm);
}

}  // namespace

// The bound. Both backends compute every sum of the step in fp32, in their
// own orders; any two orders of an n-term sum differ by at most
// 2·γ_{n−1}·Σ|tᵢ| ≈ 2n·u·Σ|tᵢ| (Higham, §4.2). To first order the relative
// differences of the sums a gradient rests on add up, so for sums whose Σ|tᵢ|
// is of the order of |Σtᵢ| (the assumption tests/dist/test_data_parallel.cpp
// states too) a gradient differs by at most 2u·Σn over the sums on its path:
// every forward sum, the backward sums down to its layer, its own. We allow
// the total over the whole model, every tensor alike:
//   LeNet-5, batch 8: forward 25 + 150 + 400 + 120 + 84 + 10 (conv1, conv2's
//     C·R·S, fc1-fc3's inputs, softmax's classes); data gradients 10 + 84 +
//     120 + 400 (fc3..fc1, conv2's K·R·S); conv1's weight gradient over
//     N·P·Q = 8·28·28 = 6272: 7675 terms, 9.1e-4;
//   mini-AlexNet, batch 4: forward 9 + 288 + 576 + 1152 + 1152 + 576 + 256 +
//     128 + 10; data gradients 10 + 128 + 256 + 576 + 1152 + 1152 + 576;
//     conv1's weight gradient 4·28·28 = 3136: 11133 terms, 1.3e-3.
// Measured: at most 4.2e-7 (LeNet-5) and 7.7e-7 (mini-AlexNet), a few u. A
// gradient 1% off (a missing 1/N, a doubled bias gradient, a lost dropout
// scale), which Adam's steps would hide (they do not change when a
// parameter's gradient is scaled), fails here.
TEST_CASE("train emu: one step's gradient of every parameter equals the CPU's to rounding") {
  const data::Dataset set = data::make_squares(8, 10, 28, 11);
  constexpr double u = 0x1p-24;
  for (const auto& [model, batch, terms] : {std::tuple<std::string, int64_t, double>{"lenet5", 8, 7675},
                                            {"alexnet", 4, 11133}}) {
    const auto cpu = one_step_gradients(model, Device::cpu, set, batch);
    const auto emu = one_step_gradients(model, Device::emu, set, batch);
    REQUIRE(cpu.size() == emu.size());
    REQUIRE(cpu.size() == (model == "lenet5" ? 10u : 16u));
    for (size_t i = 0; i < cpu.size(); ++i) {
      INFO(model, " ", cpu[i].first);
      CHECK(relative_difference(emu[i].second, cpu[i].second) <= 2 * u * terms);
    }
  }
}
