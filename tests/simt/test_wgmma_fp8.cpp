// matmul/15 (fp8 wgmma fed by TMA) where the registry's test sizes do not
// reach: K long enough for its 7-stage ring of 128-wide k-steps to come round
// twice (the registry's longest K, 328, is 3 steps), and operands TMA cannot
// read in place because they do not start 16-byte aligned. Both against the
// op's CPU reference, and against the plain fp32 bound: the registration
// declares 14-bit sums (the GPU's), but the emulator sums in fp32, so the
// bound the GPU's check widens must not be what lets it pass here (the
// registry widens only the CUDA copy's: Kernel::accumulation_widening).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "device/registry.hpp"
#include "device/run.hpp"
#include "tests/simt/device_buffer.hpp"

using namespace warpnet;

namespace {
constexpr uint64_t kSeed = 2026;

// Passes when every element meets the op's fp32 bound (not only the widened one).
void check_fp32_bound(const device::Kernel& kernel, const device::Sizes& sizes, const std::vector<Tensor>& inputs,
                      const std::vector<Tensor>& got) {
  const device::Comparison c = device::compare(kernel, sizes, inputs, got);
  if (c.mismatches) std::printf("%lld of %lld wrong\n%s", (long long)c.mismatches, (long long)c.checked, c.first.c_str());
  CHECK(c.mismatches == 0);
  CHECK(c.checked == int64_t(sizes[0] * sizes[1]));
  // worst_ratio is |error| / (widening x bound): at most 1 / widening within the fp32 bound.
  CHECK(c.worst_ratio * kernel.accumulation_widening() <= 1.0);
}

}  // namespace

TEST_CASE("matmul/15: the ring comes round twice, in place and packed") {
  const device::Kernel& v15 = device::find_kernel("matmul/15");
  const device::Op& op = device::op("matmul");
  // K = 1792: 14 k-steps, each of the 7 stages filled twice (both parities
  // of every barrier). K = 1930: 16 steps, off 16 (both operands packed,
  // pitch 1936); M and N off the 128 tile.
  for (const device::Sizes& sizes : {device::Sizes{72, 136, 1792, 0, 1}, device::Sizes{72, 136, 1792, 0, 0},
                                     device::Sizes{40, 130, 1930, 1, 0}}) {
    INFO(device::describe_sizes(op, sizes), ", seed ", kSeed);
    Rng rng(kSeed);
    const auto inputs = device::make_inputs(v15, sizes, rng);
    std::vector<Tensor> got;
    REQUIRE_NOTHROW(got = device::run_emulated(v15, sizes, inputs));
    check_fp32_bound(v15, sizes, inputs, got);
  }
}

TEST_CASE("matmul/15: operands not 16-byte aligned are packed first") {
  const device::Kernel& v15 = device::find_kernel("matmul/15");
  const device::Op& op = device::op("matmul");
  // {0, 1} with K % 16 == 0 is the layout TMA reads in place: only the
  // misalignment sends A and B through pack_k_major (not transposing).
  const device::Sizes sizes{48, 144, 160, 0, 1};
  INFO(device::describe_sizes(op, sizes), ", seed ", kSeed);
  Rng rng(kSeed);
  const auto inputs = device::make_inputs(v15, sizes, rng);
  const std::vector<uint8_t> a = device::device_bytes(v15, inputs[0]), b = device::device_bytes(v15, inputs[1]);
  DeviceBuffer<uint8_t> a_buffer(a.size() + 1), b_buffer(b.size() + 3);  // each operand 1 or 3 bytes in
  std::vector<uint8_t> a_shifted(1, 0), b_shifted(3, 0);
  a_shifted.insert(a_shifted.end(), a.begin(), a.end());
  b_shifted.insert(b_shifted.end(), b.begin(), b.end());
  a_buffer.upload(a_shifted);
  b_buffer.upload(b_shifted);
  // Poisoned, as run_emulated does: an element never written cannot pass.
  DeviceBuffer<float> c_buffer(std::vector<float>(size_t(sizes[0] * sizes[1]), std::nanf("")));
  void* const buffers[3] = {a_buffer.get() + 1, b_buffer.get() + 3, c_buffer.get()};
  REQUIRE_NOTHROW(device::launch(v15, sizes, buffers));
  Tensor c = Tensor::empty(Shape{sizes[0], sizes[1]});
  const std::vector<float> values = c_buffer.download();
  std::copy(values.begin(), values.end(), c.data<float>());
  check_fp32_bound(v15, sizes, inputs, {c});
}
