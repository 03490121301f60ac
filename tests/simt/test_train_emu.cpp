// Training on the emulator backend: the same model, data and seed trained on
// the CPU (Eigen) and on Device::emu (warpnet's kernels, emulated) must give
// the same losses step by step. Both compute in fp32 and differ only in the
// order of their sums, so the losses agree to about 1e-6 relative; 1e-4
// leaves room for a few steps of that drift, while a wrong gradient (one
// term missing, a bias never updated) moves the loss by more after one step.
#include <doctest/doctest.h>

#include <cstring>

#include "datasets/synthetic.hpp"
#include "device_buffer.hpp"
#include "nn/device_dataset.hpp"
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
