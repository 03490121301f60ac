// Every matmul version through the emulator in all four layouts at sizes
// where each stored row is a whole number of 16-byte chunks (fp32, 16-bit and
// 8-bit elements alike), yet no dimension is a multiple of a block tile. The
// op's test sizes reach the vector (16-byte) loads only untransposed (128^3,
// 64x192x96); transposed, their odd sizes always take the element-wise
// fallback. Here the vector path of every layout runs, with partial tiles on
// every edge, against the same CPU reference and tolerance as the registry test.
#include <doctest/doctest.h>

#include <cstdio>

#include "device/registry.hpp"
#include "device/run.hpp"

using namespace warpnet;

namespace {
constexpr uint64_t kSeed = 2027;
}  // namespace

TEST_CASE("matmul: every version takes its 16-byte loads in all four layouts, with partial tiles on every edge") {
  // 144 = 128 + 16 rows of C, N = 80 under one 128-wide tile, K = 48 = 32 + 16:
  // multiples of 16 (a chunk of 16 fp8, 8 bf16 or 4 fp32 elements), of no
  // block tile's side, and of no k-step but 16.
  const device::Op& op = device::op("matmul");
  for (const device::Kernel* kernel : device::kernels(device::Copy::emulator)) {
    if (kernel->op != "matmul" || !kernel->emulator) continue;
    for (const bool ta : {false, true})
      for (const bool tb : {false, true}) {
        const device::Sizes sizes{144, 80, 48, ta ? 1 : 0, tb ? 1 : 0};
        const std::string what = cat(kernel->id(), " at ", device::describe_sizes(op, sizes), ", seed ", kSeed);
        INFO(what);
        Rng rng(kSeed);
        const auto inputs = device::make_inputs(*kernel, sizes, rng);
        std::vector<Tensor> got;
        REQUIRE_NOTHROW(got = device::run_emulated(*kernel, sizes, inputs));
        const device::Comparison c = device::compare(*kernel, sizes, inputs, got);
        if (c.mismatches) std::printf("%s: %lld of %lld wrong\n%s", what.c_str(), (long long)c.mismatches,
                                      (long long)c.checked, c.first.c_str());
        CHECK(c.mismatches == 0);
        CHECK(c.checked == 144 * 80);
      }
  }
}
