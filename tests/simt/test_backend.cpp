// The emulator backend (Device::emu): tests/backend_checks.hpp, and what is
// particular to choosing kernels and refusing bad inputs.
#include <set>
#include <string>

#include "device/launch_floor.hpp"
#include "tests/backend_checks.hpp"

using namespace warpnet;

namespace {
constexpr uint64_t kSeed = 77;
}  // namespace

TEST_CASE("backend emu: a tensor goes to the emulator and back unchanged; host access to it is refused") {
  backend_checks::round_trip(Device::emu, kSeed);
}

TEST_CASE("backend emu: matmul and its gradients match the CPU, every layout") {
  backend_checks::matmul_and_gradients(Device::emu, kSeed);
}

TEST_CASE("backend emu: the default kernel is the best fp32 version; bad inputs are named") {
  const device::Kernel& best = device::best_kernel("matmul", Device::emu);
  CHECK(best.input_format == nullptr);
  CHECK(best.id() == "matmul/10_autotuned");
  // best_versions.cpp, not the highest number, chooses: every op with an
  // fp32 version the emulator runs has an entry, and each entry is one.
  std::set<std::string> ops;
  for (const device::Kernel* k : device::kernels())
    if (!k->input_format && k->emulator) ops.insert(k->op);
  for (const std::string& op : ops) {
    INFO(op);
    CHECK(device::best_versions().contains(op));
    const device::Kernel* chosen = nullptr;
    CHECK_NOTHROW(chosen = &device::best_kernel(op, Device::emu));
    if (chosen) CHECK(chosen->version == device::best_versions().at(op));
  }
  for (const auto& [op, version] : device::best_versions()) CHECK_MESSAGE(ops.contains(op), op, " is not an op");

  Rng rng(kSeed);
  const Tensor a = backend_checks::random({4, 3}, rng).to(Device::emu);
  const Tensor b = backend_checks::random({5, 2}, rng).to(Device::emu);
  CHECK_THROWS_WITH_AS(device::matmul(a, b), doctest::Contains("inner dimensions differ"), Error);
  const Tensor host_b = backend_checks::random({3, 2}, rng);
  CHECK_THROWS_WITH_AS(device::matmul(a, host_b), doctest::Contains("both must be on one device"), Error);
  // K = 0: an empty sum, zeros without a launch.
  const Tensor empty_k = device::matmul(Tensor::empty({2, 0}).to(Device::emu), Tensor::empty({0, 3}).to(Device::emu));
  CHECK(empty_k.to(Device::cpu).item(5) == 0.0);
}

TEST_CASE("backend emu: every layer op matches its CPU twin (conv, pooling, activations, dropout, loss)") {
  backend_checks::layer_ops(Device::emu, kSeed);
}

TEST_CASE("backend emu: an optimizer step over many parameters matches the CPU, multi-tensor and one by one") {
  backend_checks::optimizer_steps(Device::emu, kSeed);
}

TEST_CASE("backend emu: --kernels chooses versions; a choice naming nothing registered is refused") {
  const std::string before = device::kernel_choice();
  device::set_kernel_choice("1");
  CHECK(device::chosen_kernel("matmul", Device::emu).version == 1);
  CHECK(device::chosen_kernel("conv2d", Device::emu).version == 1);
  device::set_kernel_choice("matmul=3,conv2d=2");
  CHECK(device::chosen_kernel("matmul", Device::emu).id() == "matmul/03_smem_tiled");
  CHECK(device::chosen_kernel("conv2d", Device::emu).version == 2);
  CHECK(&device::chosen_kernel("relu", Device::emu) == &device::best_kernel("relu", Device::emu));
  // A version the registry lacks is refused at once; one that is there but
  // not fp32 (12: bf16 mma.sync), at the op's first launch.
  CHECK_THROWS_WITH_AS(device::set_kernel_choice("matmul=99"),
                       doctest::Contains("--kernels matmul=99: matmul has no version 99 (its versions: 1, 2, "), Error);
  device::set_kernel_choice("matmul=12");
  CHECK_THROWS_WITH_AS(device::chosen_kernel("matmul", Device::emu), doctest::Contains("matmul has no fp32 version 12"),
                       Error);
  CHECK_THROWS_WITH_AS(device::set_kernel_choice("nonsense=1"),
                       doctest::Contains("no op named 'nonsense' (the ops: adam, "), Error);
  CHECK_THROWS_WITH_AS(device::set_kernel_choice("=3"),
                       doctest::Contains("--kernels: '=3' names no op (in '=3'; expected op=version)"), Error);
  CHECK_THROWS_WITH_AS(device::set_kernel_choice("fast"), doctest::Contains("'fast' is not a version number"), Error);
  CHECK_THROWS_WITH_AS(device::set_kernel_choice("0"), doctest::Contains("--kernels 0: a version limit is at least 1"),
                       Error);
  CHECK_THROWS_WITH_AS(device::set_kernel_choice("matmul=1,relu=1,matmul=2"),
                       doctest::Contains("--kernels: matmul is chosen twice"), Error);
  device::set_kernel_choice(before);
}

TEST_CASE("backend emu: the launch floor captures its chain as one node per launch and times both ways") {
  const uint64_t before = device::kernel_launches();
  const device::LaunchFloor floor = device::launch_floor(Device::emu, 5, 2);
  CHECK(floor.launches == 5);
  CHECK(floor.graph_nodes == 5);  // a ReLU is one kernel; nothing else was recorded
  // Eager: the untimed chain and two timed ones through launch_op; the two
  // captures' chains count too, their replays do not.
  CHECK(device::kernel_launches() - before == 5 * 5);
  CHECK(floor.eager_us > 0);
  CHECK(floor.graph_us > 0);
  CHECK(floor.programmatic_graph_us > 0);
  CHECK_THROWS_WITH_AS(device::launch_floor(Device::cpu, 5, 2), doctest::Contains("the CPU launches no kernels"), Error);
  CHECK_THROWS_WITH_AS(device::launch_floor(Device::emu, 0, 2),
                       doctest::Contains("launches (0) and repeats (2) must be at least 1"), Error);
}
