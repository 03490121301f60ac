// Convolutions whose stride, padding or dilation make a block's input window
// wider than int can count: the output stays tiny, so the shapes are legal,
// but a tile's rows x columns computed in int wraps to a small number and
// passes a "fits in shared memory" test. Every emulatable conv kernel must
// refuse such a shape with an error or compute it right; the traced copy
// runs them, so an access past shared or global memory is a failed launch
// here, not a crash.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/rng.hpp"
#include "device/registry.hpp"
#include "device/run.hpp"

using namespace warpnet;

namespace {

// {N, C, H, W, K, R, S, stride, pad, dilation}
const std::vector<device::Sizes> kHugeWindows = {
    // (65535 + 1)^2 = 2^32 input floats per window: 0 in int (conv2d v8's tile).
    {1, 3, 2, 2, 8, 1, 1, 65535, 32767, 1},
    // 25000-pixel strides: a band's rows x columns negative in int (wgrad v4).
    {1, 1, 8, 8, 1, 3, 3, 25000, 25000, 1},
    // (15 * 4369 + 1)^2 = 2^32 + 8: 8 floats in int (conv2d v2's halo).
    {1, 1, 1, 1, 1, 1, 1, 4369, 0, 1},
    // A dilation whose filter span nearly fills the padded input.
    {1, 2, 3, 3, 2, 2, 2, 1, 40000, 80000},
    // 64 channels of a 4 x 9032 window: C * window wraps in int (wgrad v4's dy offset).
    {1, 64, 1, 1, 1, 1, 1, 3000, 4500, 1},
};

}  // namespace

TEST_CASE("conv: a window past int's range is refused or computed right, by every version, every pass") {
  for (const char* op_name : {"conv2d", "conv2d_dgrad", "conv2d_wgrad"}) {
    const device::Op& op = device::op(op_name);
    for (const device::Kernel* kernel : device::kernels(device::Copy::traced)) {
      if (kernel->op != op_name || !kernel->emulator) continue;
      for (const device::Sizes& sizes : kHugeWindows) {
        const std::string what = cat(kernel->id(), " at ", device::describe_sizes(op, sizes));
        INFO(what);
        Rng rng(7);
        const auto inputs = device::make_inputs(*kernel, sizes, rng);
        std::vector<Tensor> got;
        try {
          got = device::run_emulated(*kernel, sizes, inputs);
        } catch (const Error& e) {
          // A refusal must say why, not report what a wrapped window does:
          // an access out of bounds, a read of shared memory nobody wrote, a
          // race, a misaligned vector access (the checker's launch failures).
          const std::string message = e.what();
          for (const char* fault : {"cudaErrorIllegalAddress", "cudaErrorLaunchFailure", "cudaErrorMisalignedAddress",
                                    "out-of-bounds", "uninitialized", "memory race"})
            CHECK_MESSAGE(message.find(fault) == std::string::npos, message);
          continue;
        }
        const device::Comparison c = device::compare(*kernel, sizes, inputs, got);
        CHECK_MESSAGE(c.mismatches == 0, cat(what, ": ", c.mismatches, " of ", c.checked, " wrong\n", c.first));
      }
    }
  }
}

TEST_CASE("conv: conv2d/02's refusal of a window past a block's shared memory names the shape") {
  const device::Kernel& halo = device::find_kernel("conv2d/02");
  const device::Sizes sizes{1, 1, 1, 1, 1, 1, 1, 4369, 0, 1};
  Rng rng(7);
  const auto inputs = device::make_inputs(halo, sizes, rng);
  CHECK_THROWS_WITH_AS(device::run_emulated(halo, sizes, inputs),
                       doctest::Contains("at stride 4369, dilation 1 and a 1x1 filter, a 16x16 output tile reads a "
                                         "65536x65536 input window"),
                       Error);
}

TEST_CASE("conv: past a tap table's 16-bit range, the versions with tables compute it") {
  // Past what the packed tables' 16-bit displacements hold, conv v7-12 run
  // v4's kernel at their tiles, dgrad v3-8 dgrad v2's, and wgrad v3-5's
  // tiles unpack their table (WideTap). 12 channels and 20 outputs: past the
  // few-channel direct kernels, so a tile is what runs.
  const std::vector<device::Sizes> sizes = {
      // H + pad = 70001.
      {1, 12, 70000, 1, 20, 3, 1, 1, 1, 1},
      // W + pad = 70001, a dilation of 35000 (the filter spans the row) and
      // stride 2: the column displacements themselves pass 16 bits (the
      // packed table got 240 of wgrad's 720 wrong here).
      {2, 12, 3, 69999, 20, 1, 3, 2, 2, 35000},
  };
  for (const device::Sizes& size : sizes)
    for (const char* id : {"conv2d/07", "conv2d/09", "conv2d/11", "conv2d/12", "conv2d_dgrad/03", "conv2d_dgrad/05",
                           "conv2d_dgrad/07", "conv2d_dgrad/08", "conv2d_wgrad/03", "conv2d_wgrad/04",
                           "conv2d_wgrad/05"}) {
      const device::Kernel& kernel = device::find_kernel(id);
      INFO(id, " at ", device::describe_sizes(device::op(kernel.op), size));
      Rng rng(7);
      const auto inputs = device::make_inputs(kernel, size, rng);
      const auto got = device::run_emulated(kernel, size, inputs);
      const device::Comparison c = device::compare(kernel, size, inputs, got);
      CHECK_MESSAGE(c.mismatches == 0, cat(c.mismatches, " of ", c.checked, " wrong\n", c.first));
    }
}

TEST_CASE("conv: wgrad's unpacked tap table refuses past 2^29, by name") {
  // pad 2^29: past even the unpacked table's reach (its sums would near
  // int's range); refused, naming the limit, before anything launches.
  const device::Kernel& wgrad = device::find_kernel("conv2d_wgrad/03");
  const device::Sizes huge{1, 1, 1, 1, 1, 1, 1, 1 << 30, 1 << 29, 1};
  Rng rng(7);
  CHECK_THROWS_WITH_AS(device::run_emulated(wgrad, huge, device::make_inputs(wgrad, huge, rng)),
                       doctest::Contains("H + pad and W + pad must be at most 536870912"), Error);
}
