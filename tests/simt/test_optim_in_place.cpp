// The optimizer kernels (kernels/optim/) promise that an update may be done in
// place: the same pointer for w and w', v and v' (and m and m'), as a
// training step calls them. The registry test checks them out of place; this
// runs every version, plain and traced (the checker sees every access), with
// the state buffers doubling as outputs and asks for the out-of-place result
// bit for bit.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "device/registry.hpp"
#include "device/run.hpp"
#include "device_buffer.hpp"

using namespace warpnet;

namespace {
constexpr uint64_t kSeed = 2027;

// Runs `kernel` with its state inputs (all but g and hyper, the last two
// inputs) also passed as its outputs, and returns those buffers afterwards.
std::vector<Tensor> run_in_place(const device::Kernel& kernel, const device::Sizes& sizes,
                                 const std::vector<Tensor>& inputs) {
  const size_t states = inputs.size() - 2;  // {w, v} or {w, m, v}; then g, hyper
  std::vector<std::unique_ptr<DeviceBuffer<float>>> memory;
  std::vector<void*> buffers;
  for (const Tensor& t : inputs) {
    const float* p = t.data<float>();
    memory.push_back(std::make_unique<DeviceBuffer<float>>(std::vector<float>(p, p + t.numel())));
    buffers.push_back(memory.back()->get());
  }
  for (size_t i = 0; i < states; ++i) buffers.push_back(buffers[i]);  // the outputs: the states themselves
  device::launch(kernel, sizes, buffers);
  std::vector<Tensor> out;
  for (size_t i = 0; i < states; ++i) {
    const std::vector<float> values = memory[i]->download();
    Tensor t = Tensor::empty({int64_t(values.size())});
    std::memcpy(t.data<float>(), values.data(), values.size() * sizeof(float));
    out.push_back(std::move(t));
  }
  return out;
}
}  // namespace

TEST_CASE("optimizer kernels update in place exactly as out of place (w' = w, v' = v, m' = m)") {
  int checked = 0;
  for (device::Copy copy : {device::Copy::emulator, device::Copy::traced}) {
    for (const device::Kernel* kernel : device::kernels(copy)) {
      if (kernel->op != "sgd_momentum" && kernel->op != "adam") continue;
      for (const device::Sizes& sizes : {device::Sizes{1}, device::Sizes{1031}, device::Sizes{4099}}) {
        INFO(kernel->id(), " (", device::to_string(copy), ") at n=", sizes[0], ", seed ", kSeed);
        Rng rng(kSeed);
        const std::vector<Tensor> inputs = device::make_inputs(*kernel, sizes, rng);
        const std::vector<Tensor> want = device::run_emulated(*kernel, sizes, inputs);
        std::vector<Tensor> got;
        REQUIRE_NOTHROW(got = run_in_place(*kernel, sizes, inputs));
        REQUIRE(got.size() == want.size());
        for (size_t o = 0; o < got.size(); ++o) {
          INFO("output ", o);
          CHECK(std::memcmp(got[o].data<float>(), want[o].data<float>(), size_t(got[o].nbytes())) == 0);
        }
        ++checked;
      }
    }
  }
  // Every version of both ops, counted from the registry (a version added
  // later is checked too, and a renamed op would leave nothing checked).
  int versions = 0;
  for (const device::Kernel* k : device::kernels(device::Copy::emulator))
    versions += k->op == "sgd_momentum" || k->op == "adam";
  CHECK(versions >= 6);  // the three of each op there are today
  CHECK(checked == versions * 2 * 3);  // x 2 copies x 3 sizes
}
