// The CUDA backend (Device::cuda) on a real GPU: the checks every backend
// passes (tests/backend_checks.hpp), through the best CUDA-copy kernel.
#include "tests/backend_checks.hpp"
#include "tests/graph_checks.hpp"

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

TEST_CASE("train cuda: a ReLU folded into its layer trains bit for bit as the two ops, in fewer launches and bytes") {
  graph_checks::folded_equals_unfolded(Device::cuda, "lenet5", 8, 4, 6 * 28 * 28);
}

TEST_CASE("backend cuda: a kernel with a tuner is tuned at the first launch of each size, and only then") {
  // A size no other test uses, so its first launch is this one.
  const Tensor a = Tensor::zeros({37, 19}).to(Device::cuda), b = Tensor::zeros({19, 23}).to(Device::cuda);
  const device::Kernel& k = device::chosen_kernel("matmul", Device::cuda);
  if (!k.tune) return;  // the best matmul of this build has no tuner: nothing to check
  const size_t before = device::kernels_tuned().lines.size();
  device::matmul(a, b);
  const std::vector<std::string> after = device::kernels_tuned().lines;
  REQUIRE(after.size() == before + 1);
  CHECK(after.back().find(k.id()) == 0);
  CHECK(after.back().find("M=37") != std::string::npos);
  device::matmul(a, b);
  CHECK(device::kernels_tuned().lines.size() == before + 1);
}
