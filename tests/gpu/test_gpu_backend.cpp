// The CUDA backend (Device::cuda) on a real GPU: the checks every backend
// passes (tests/backend_checks.hpp), through the best CUDA-copy kernel.
#include "tests/backend_checks.hpp"
#include "tests/graph_checks.hpp"

#include <algorithm>
#include <cmath>

using namespace warpnet;

namespace {
constexpr uint64_t kSeed = 77;
}  // namespace

TEST_CASE("backend cuda: a tensor goes to the GPU and back unchanged; host access to it is refused") {
  backend_checks::round_trip(Device::cuda, kSeed);
}

TEST_CASE("backend cuda: matmul and its gradients match the CPU, every layout") {
  INFO("kernel: ", device::best_kernel("matmul", Device::cuda).id());
  backend_checks::matmul_and_gradients(Device::cuda, kSeed);
}

TEST_CASE("backend cuda: every layer op matches its CPU twin (conv, pooling, activations, dropout, loss)") {
  backend_checks::layer_ops(Device::cuda, kSeed);
}

TEST_CASE("backend cuda: an optimizer step over many parameters matches the CPU, multi-tensor and one by one") {
  backend_checks::optimizer_steps(Device::cuda, kSeed);
}

TEST_CASE("train cuda --graph: replaying the captured step equals training without it, bit for bit") {
  graph_checks::replay_equals_eager(Device::cuda, "lenet5", 8, 2);
  graph_checks::replay_equals_eager(Device::cuda, "alexnet", 4, 1);
}

TEST_CASE("train cuda --graph on cuBLAS and cuDNN (version 0): the libraries' work is captured with the step") {
  // A library launches on the stream its handle is bound to: left on the
  // legacy stream, the capture ends in cudaErrorStreamCaptureImplicit and
  // training stops. Bit-for-bit equality with eager training is
  // replay_equals_eager's (above) on warpnet's kernels; cuDNN's fastest
  // backward algorithms may add with atomics, so here the capture must hold
  // the step, and the first step, eager in both runs, agrees exactly. Two
  // epochs: the partial batch (5 rows) runs uncaptured with new cuDNN plans,
  // which may grow the workspace; the second epoch's replays still use the
  // one the graph was captured with, which must not have been freed.
  // The trainer sets the kernel choice from its options (the default "best").
  const data::Dataset train_set = data::make_squares(3 * 8 + 5, 10, 28, 31),
                      test_set = data::make_squares(8, 10, 28, 32);
  nn::TrainOptions o;
  o.model = "lenet5";
  o.batch_size = 8;
  o.device = Device::cuda;
  o.epochs = 2;
  o.kernels = "matmul=0,conv2d=0,conv2d_dgrad=0,conv2d_wgrad=0";
  std::vector<double> losses[2];
  uint64_t eager_step = 0;  // the launches of the eager run's second step (its first tunes)
  size_t nodes[2] = {0, 0};
  for (int graphed = 0; graphed < 2; ++graphed) {
    o.graph = graphed ? nn::TrainOptions::Graph::on : nn::TrainOptions::Graph::off;
    nn::Trainer trainer(o, train_set, test_set);
    std::vector<uint64_t> launches;
    REQUIRE_NOTHROW(trainer.run([&](const nn::StepProgress& s) {
      losses[graphed].push_back(s.loss);
      launches.push_back(device::kernel_launches());
    }));
    if (!graphed) eager_step = launches.at(1) - launches.at(0);
    nodes[graphed] = trainer.graphed_step() ? trainer.graphed_step()->nodes() : 0;
  }
  device::set_kernel_choice("best");
  const std::vector<std::string> launched = device::kernels_launched();
  for (const char* id : {"matmul/00_cublas", "conv2d/00_cudnn", "conv2d_dgrad/00_cudnn", "conv2d_wgrad/00_cudnn"}) {
    INFO(id);
    CHECK(std::find(launched.begin(), launched.end(), id) != launched.end());
  }
  CHECK(nodes[0] == 0);
  // The whole step is in the graph: at least a node per launch of an eager step.
  INFO("launches of an eager step: ", eager_step, ", nodes in the graph: ", nodes[1]);
  CHECK(eager_step >= 10);
  CHECK(nodes[1] >= eager_step);
  REQUIRE(losses[1].size() == 8);
  REQUIRE(losses[0].size() == 8);
  CHECK(losses[1][0] == losses[0][0]);
  for (double loss : losses[1]) CHECK(std::isfinite(loss));
}

TEST_CASE("train cuda: a ReLU folded into its layer trains bit for bit as the two ops, in fewer launches and bytes") {
  graph_checks::folded_equals_unfolded(Device::cuda, "lenet5", 8, 4, 6 * 28 * 28);
}

TEST_CASE("train cuda --fused-step: LeNet-5's step in two kernels follows the CPU's losses, step by step (Adam)") {
  SUBCASE("ordered launches") { graph_checks::fused_step_follows_cpu(Device::cuda, false); }
  SUBCASE("programmatic dependent launches") { graph_checks::fused_step_follows_cpu(Device::cuda, true); }
}

TEST_CASE("backend cuda: a kernel with a tuner is tuned at the first launch of each size, and only then") {
  // A size no other test uses, so its first launch is this one.
  const Tensor a = Tensor::zeros({37, 19}).to(Device::cuda), b = Tensor::zeros({19, 23}).to(Device::cuda);
  device::set_kernel_choice("matmul=10");  // the autotuned version, whatever is best in this build
  const device::Kernel& k = device::chosen_kernel("matmul", Device::cuda);
  const bool tunes = k.tune != nullptr;
  REQUIRE(tunes);
  const size_t before = device::kernels_tuned().lines.size();
  device::matmul(a, b);
  const std::vector<std::string> after = device::kernels_tuned().lines;
  REQUIRE(after.size() == before + 1);
  CHECK(after.back().find(k.id()) == 0);
  CHECK(after.back().find("M=37") != std::string::npos);
  device::matmul(a, b);
  CHECK(device::kernels_tuned().lines.size() == before + 1);
  device::set_kernel_choice("best");
}
