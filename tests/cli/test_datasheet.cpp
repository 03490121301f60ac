// The peaks `warpnet bench` divides by (% of peak): which clock each part's
// tensor rate is taken at, and the rates that come out.
#include <doctest/doctest.h>

#include "device/datasheet.hpp"

namespace ds = warpnet::device::datasheet;

TEST_CASE("an H200 SXM's peaks are its datasheet's: fp32 at the reported boost clock, tensor rates at 1.83 GHz") {
  const ds::Arch* hopper = ds::find_arch(9, 0);
  REQUIRE(hopper);
  const double reported = 1.98;  // what an H200 reports (bench/results/nvidia-h200-2026-11-30.json)
  const ds::Part* sxm = ds::find_part(9, 0, 132, "NVIDIA H200");
  REQUIRE(sxm);
  CHECK(ds::tensor_clock_ghz(sxm, reported) == 1.83);
  CHECK(ds::find_part(9, 0, 132, "NVIDIA H100 80GB HBM3") == sxm);
  CHECK(ds::tflops(132, reported, hopper->fp32) == doctest::Approx(66.9).epsilon(1e-3));
  CHECK(ds::tflops(132, 1.83, hopper->tensor16) == doctest::Approx(989.4).epsilon(1e-4));
  CHECK(ds::tflops(132, 1.83, hopper->fp8) == doctest::Approx(1978.9).epsilon(1e-4));
}

TEST_CASE("Hopper's other boards take their own datasheets' tensor clocks: the NVL cards and the H100 PCIe") {
  const ds::Arch& hopper = *ds::find_arch(9, 0);
  // An H200 NVL has the SXM's 132 SMs but reports 1.785 GHz (60 TFLOP/s fp32)
  // and states 835.5 bf16 / 1671 fp8 dense: the SXM's 1.83 would overstate it.
  const ds::Part* nvl = ds::find_part(9, 0, 132, "NVIDIA H200 NVL");
  REQUIRE(nvl);
  CHECK(ds::find_part(9, 0, 132, "NVIDIA H100 NVL") == nvl);
  CHECK(ds::tflops(132, 1.785, hopper.fp32) == doctest::Approx(60.3).epsilon(1e-3));
  CHECK(ds::tflops(132, ds::tensor_clock_ghz(nvl, 1.785), hopper.tensor16) == doctest::Approx(835.5).epsilon(1e-3));
  CHECK(ds::tflops(132, ds::tensor_clock_ghz(nvl, 1.785), hopper.fp8) == doctest::Approx(1671).epsilon(1e-3));
  const ds::Part* pcie = ds::find_part(9, 0, 114, "NVIDIA H100 PCIe");
  REQUIRE(pcie);
  CHECK(ds::tflops(114, 1.755, hopper.fp32) == doctest::Approx(51.2).epsilon(1e-3));
  CHECK(ds::tflops(114, ds::tensor_clock_ghz(pcie, 1.755), hopper.tensor16) == doctest::Approx(756).epsilon(1e-3));
  CHECK(ds::tflops(114, ds::tensor_clock_ghz(pcie, 1.755), hopper.fp8) == doctest::Approx(1513).epsilon(1e-3));
}

TEST_CASE("an unknown part, or clocks held below the datasheet's, keep the reported clock") {
  CHECK(ds::find_part(9, 0, 120, "NVIDIA H100 something") == nullptr);  // no datasheet part has 120 SMs
  CHECK(ds::tensor_clock_ghz(nullptr, 1.7) == 1.7);
  CHECK(ds::tensor_clock_ghz(ds::find_part(9, 0, 132, "NVIDIA H200"), 1.5) == 1.5);  // clocks locked low
  CHECK(ds::find_part(8, 0, 108, "NVIDIA A100-SXM4-80GB") == nullptr);  // Ampere's rates hold at its boost clock
  const ds::Arch& ampere = *ds::find_arch(8, 0);
  CHECK(ds::tflops(108, 1.41, ampere.tensor16) == doctest::Approx(312).epsilon(1e-3));  // A100 SXM bf16
}

TEST_CASE("an architecture the table lacks has no peak rather than a borrowed one") {
  CHECK(ds::find_arch(12, 0) == nullptr);
  CHECK(ds::find_arch(7, 5) == nullptr);
  CHECK(ds::find_arch(8, 9)->fp8 > 0);
  CHECK(ds::find_arch(8, 0)->fp8 == 0);  // Ampere has no fp8 tensor cores
}
