// A registered kernel run whole through the emulator at one size, on the
// op's random inputs, checked element by element against the op's CPU
// reference: the check the registry's tests make at the op's test sizes,
// for the tests that reach further than those.
#pragma once
#include <doctest/doctest.h>

#include <cstdio>

#include "core/rng.hpp"
#include "device/registry.hpp"
#include "device/run.hpp"

namespace warpnet::test {

inline void check_matches_reference(const device::Kernel& kernel, const device::Sizes& sizes, uint64_t seed) {
  const device::Op& op = device::op(kernel.op);
  INFO(kernel.id(), " at ", device::describe_sizes(op, sizes), ", seed ", seed);
  Rng rng(seed);
  const auto inputs = device::make_inputs(kernel, sizes, rng);
  std::vector<Tensor> got;
  REQUIRE_NOTHROW(got = device::run_emulated(kernel, sizes, inputs));
  const device::Comparison c = device::compare(kernel, sizes, inputs, got);
  if (c.mismatches) std::printf("%lld of %lld wrong\n%s", (long long)c.mismatches, (long long)c.checked, c.first.c_str());
  CHECK(c.mismatches == 0);
  int64_t elements = 0;
  for (const Shape& shape : op.output_shapes(sizes)) elements += shape.numel();
  CHECK(c.checked == elements);  // every element, not a sample
}

}  // namespace warpnet::test
