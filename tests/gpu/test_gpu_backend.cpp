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

TEST_CASE("backend cuda: every layer op matches its CPU twin (conv, pooling, activations, dropout, loss, optimizers)") {
  backend_checks::layer_ops(Device::cuda, kSeed);
}

TEST_CASE("train cuda --graph: replaying the captured step equals training without it, bit for bit") {
  graph_checks::replay_equals_eager(Device::cuda, "lenet5", 8, 2);
  graph_checks::replay_equals_eager(Device::cuda, "alexnet", 4, 1);
}
