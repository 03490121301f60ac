// Training with a captured graph (nn/graphed_step.hpp) against training
// without one, on a device backend: the emulator (tests/simt) and a real GPU
// (tests/gpu) run the same check.
#pragma once
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/memory.hpp"
#include "datasets/synthetic.hpp"
#include "device/backend.hpp"
#include "nn/data_parallel.hpp"
#include "nn/trainer.hpp"

namespace warpnet::graph_checks {

// A graph replays the kernels the eager step launched, with the same
// arguments, in the same order, on the same values; the training kernels are
// deterministic (no atomics: kernels/conv/wgrad_02 and 03, kernels/reduce), so the
// two runs must agree bit for bit, every step, across epochs. What this
// catches: a value frozen into the capture (Adam's bias correction, or a
// dropout seed, passed as a launch argument would repeat the captured
// step's at every replay), an input not copied into the captured buffers,
// graph memory handed to another tensor between replays.
//
// Each epoch: 3 full batches (1 eager, 1 captured and replayed, 1 replayed)
// and a smaller last one, eager.
inline void replay_equals_eager(Device device, const std::string& model, int64_t batch, int epochs) {
  const data::Dataset train_set = data::make_squares(3 * batch + batch / 2 + 1, 10, 28, 21),
                      test_set = data::make_squares(8, 10, 28, 22);
  nn::TrainOptions o;
  o.model = model;
  o.batch_size = batch;
  o.optimizer = "adam";
  o.lr = 2e-3;
  o.epochs = epochs;
  o.device = device;
  struct Result {
    std::vector<double> losses;
    std::vector<uint64_t> launches;  // device::kernel_launches() as each step ended
    std::vector<nn::EpochStats> epochs;
    uint64_t weights;
    size_t nodes;
  };
  auto run = [&](nn::TrainOptions::Graph graph) {
    o.graph = graph;
    nn::Trainer trainer(o, train_set, test_set);
    Result r;
    r.epochs = trainer.run([&](const nn::StepProgress& s) {
      r.losses.push_back(s.loss);
      r.launches.push_back(device::kernel_launches());
    });
    r.weights = nn::weights_fingerprint(trainer.model());
    r.nodes = trainer.graphed_step() ? trainer.graphed_step()->nodes() : 0;
    return r;
  };
  const Result eager = run(nn::TrainOptions::Graph::off);
  const Result graphed = run(nn::TrainOptions::Graph::on);
  CHECK(eager.nodes == 0);
  // The graph holds the whole step (forward, loss, backward, the update),
  // not a part of it: at least the launches of an eager full batch's step
  // (the second: the first tunes). Which kernels run, and so how many, depends
  // on the device and on what its tuners chose.
  REQUIRE(eager.launches.size() >= 2);
  const uint64_t eager_step = eager.launches[1] - eager.launches[0];
  INFO("launches of an eager step: ", eager_step, ", nodes in the graph: ", graphed.nodes);
  CHECK(eager_step >= 10);
  CHECK(graphed.nodes >= eager_step);
  REQUIRE(graphed.losses.size() == eager.losses.size());
  REQUIRE(eager.losses.size() == size_t(4 * epochs));
  for (size_t i = 0; i < eager.losses.size(); ++i) {
    INFO("step ", i + 1);
    CHECK(graphed.losses[i] == eager.losses[i]);
  }
  for (size_t e = 0; e < eager.epochs.size(); ++e) {
    CHECK(graphed.epochs[e].test_loss == eager.epochs[e].test_loss);
    CHECK(graphed.epochs[e].train_accuracy == eager.epochs[e].train_accuracy);
  }
  CHECK(graphed.weights == eager.weights);
}

// A ReLU folded into the layer before it (Sequential::fold_bias_relu: one
// bias_relu kernel for the bias and the ReLU) computes x + b and max(·, 0)
// as the two kernels do, and its backward's mask from the output is the
// mask from the input, so training must agree bit for bit with the layers
// run one by one, graphed as trained by default. `relus`: the model's ReLUs
// after a Conv2d or Linear; `first_product`: the first one's input, values
// per image.
inline void folded_equals_unfolded(Device device, const std::string& model, int64_t batch, int relus,
                                   int64_t first_product) {
  const data::Dataset train_set = data::make_squares(3 * batch + 1, 10, 28, 23),
                      test_set = data::make_squares(8, 10, 28, 24);
  nn::TrainOptions o;
  o.model = model;
  o.batch_size = batch;
  o.optimizer = "sgd";
  o.lr = 0.05;
  o.device = device;
  o.graph = nn::TrainOptions::Graph::on;
  struct Result {
    std::vector<double> losses;
    double test_loss;
    uint64_t weights;
    int folded;
    size_t nodes;
    int64_t activation_peak;  // bytes above what was kept before the run
  };
  auto run = [&](bool fold) {
    o.fold_bias_relu = fold;
    MemoryTracker& memory = MemoryTracker::instance();
    memory.reset_peaks();
    const int64_t before = memory.tag(MemTag::activation).current;
    nn::Trainer trainer(o, train_set, test_set);
    Result r;
    r.test_loss = trainer.run([&](const nn::StepProgress& s) { r.losses.push_back(s.loss); }).back().test_loss;
    r.weights = nn::weights_fingerprint(trainer.model());
    r.folded = trainer.folded_relus();
    r.nodes = trainer.graphed_step() ? trainer.graphed_step()->nodes() : 0;
    r.activation_peak = memory.tag(MemTag::activation).peak - before;
    return r;
  };
  const Result apart = run(false), folded = run(true);
  // A folded layer frees its product before the bias once bias_relu has
  // read it (no backward reads it): at least the first folded layer's,
  // `first_product` floats per image, comes off the activations' peak.
  CHECK(apart.activation_peak - folded.activation_peak >= 4 * batch * first_product);
  CHECK(apart.folded == 0);
  CHECK(folded.folded == relus);
  // Two launches fewer per folded ReLU in the captured step: its forward
  // (bias_relu for bias_add + relu) and its backward (bias_relu_backward's
  // sweep for relu_backward + bias_add_backward's).
  CHECK(folded.nodes + 2 * size_t(relus) == apart.nodes);
  REQUIRE(folded.losses.size() == apart.losses.size());
  for (size_t i = 0; i < apart.losses.size(); ++i) {
    INFO("step ", i + 1);
    CHECK(folded.losses[i] == apart.losses[i]);
  }
  CHECK(folded.test_loss == apart.test_loss);
  CHECK(folded.weights == apart.weights);
}

// LeNet-5's fused step (TrainOptions::fused_step, kernels/lenet5/) against
// the same training on the CPU's layers: every full batch runs the fused
// step, the smaller last one the device's layers (36 examples are four
// batches of 8 and one of 4). Both compute in fp32 in different orders; the
// losses agree to about 1e-6 relative and are held to 1e-4, as the
// emulator's layer-by-layer training is (tests/simt/test_train_emu.cpp).
// The op's own check (lenet5_step) holds the gradients to a derived bound.
// `programmatic`: the step captured as programmatic dependent launches
// (TrainOptions::programmatic_launches), where on a GPU each of its kernels
// starts while the one before still runs and must wait inside for it.
inline void fused_step_follows_cpu(Device device, bool programmatic) {
  const data::Dataset train_set = data::make_squares(36, 10, 28, 11), test_set = data::make_squares(8, 10, 28, 12);
  nn::TrainOptions o;
  o.model = "lenet5";
  o.batch_size = 8;
  o.optimizer = "adam";
  o.lr = 2e-3;
  const auto run = [&](Device on, bool fused) {
    o.device = on;
    o.fused_step = fused;
    o.programmatic_launches = fused && programmatic;
    o.graph = fused ? nn::TrainOptions::Graph::on : nn::TrainOptions::Graph::off;
    nn::Trainer trainer(o, train_set, test_set);
    std::vector<double> losses;
    const nn::EpochStats epoch = trainer.run([&](const nn::StepProgress& s) { losses.push_back(s.loss); }).at(0);
    if (fused) {
      REQUIRE(trainer.graphed_step() != nullptr);
      CHECK(trainer.graphed_step()->fused());
      CHECK(trainer.graphed_step()->programmatic() == programmatic);
    }
    return std::pair{losses, epoch};
  };
  const auto [cpu_losses, cpu_epoch] = run(Device::cpu, false);
  const auto [losses, epoch] = run(device, true);
  REQUIRE(losses.size() == cpu_losses.size());
  for (size_t i = 0; i < losses.size(); ++i) {
    INFO("step ", i + 1);
    CHECK(losses[i] == doctest::Approx(cpu_losses[i]).epsilon(1e-4));
  }
  CHECK(epoch.test_loss == doctest::Approx(cpu_epoch.test_loss).epsilon(1e-4));
  CHECK(epoch.train_accuracy == cpu_epoch.train_accuracy);
}

}  // namespace warpnet::graph_checks
