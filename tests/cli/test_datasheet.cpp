// The peaks `warpnet bench` divides by (% of peak): which clock each part's
// tensor rate is taken at, and the rates that come out.
#include <doctest/doctest.h>

#include "device/datasheet.hpp"

namespace ds = warpnet::device::datasheet;

TEST_CASE("an H200 SXM's peaks are its datasheet's: fp32 at the reported boost clock, tensor rates at 1.83 GHz") {
  const ds::Arch* hopper = ds::find_arch(9, 0);
  REQUIRE(hopper);
  const double reported = 1.98;  // what an H200 reports (bench/results/nvidia-h200-2026-11-30.json)
  CHECK(ds::tensor_clock_ghz(*hopper, 132, reported) == 1.83);
  CHECK(ds::tflops(132, reported, hopper->fp32) == doctest::Approx(66.9).epsilon(1e-3));
  CHECK(ds::tflops(132, 1.83, hopper->tensor16) == doctest::Approx(989.4).epsilon(1e-4));
  CHECK(ds::tflops(132, 1.83, hopper->fp8) == doctest::Approx(1978.9).epsilon(1e-4));
}

TEST_CASE("another part of the same architecture, or clocks held below the datasheet's, keep the reported clock") {
  const ds::Arch& hopper = *ds::find_arch(9, 0);
  CHECK(ds::tensor_clock_ghz(hopper, 114, 1.755) == 1.755);  // H100 PCIe: 114 SMs
  CHECK(ds::tensor_clock_ghz(hopper, 132, 1.5) == 1.5);      // an SXM part with its clocks locked low
  const ds::Arch& ampere = *ds::find_arch(8, 0);
  CHECK(ds::tensor_clock_ghz(ampere, 108, 1.41) == 1.41);
  CHECK(ds::tflops(108, 1.41, ampere.tensor16) == doctest::Approx(312).epsilon(1e-3));  // A100 SXM bf16
}

TEST_CASE("an architecture the table lacks has no peak rather than a borrowed one") {
  CHECK(ds::find_arch(12, 0) == nullptr);
  CHECK(ds::find_arch(7, 5) == nullptr);
  CHECK(ds::find_arch(8, 9)->fp8 > 0);
  CHECK(ds::find_arch(8, 0)->fp8 == 0);  // Ampere has no fp8 tensor cores
}
