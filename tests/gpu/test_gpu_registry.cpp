// Every kernel of the CUDA copy, on the real GPU, against its op's CPU
// reference at the op's test sizes (every layout the op lists): what
// tests/simt/test_registry.cpp does through the emulator. Outputs are
// poisoned with NaN before each run (gpu::Problem::run), so an element a
// kernel never writes fails. A new kernel is checked here with no edit.
#include <doctest/doctest.h>

#include <cstdio>

#include "device/cuda/gpu.hpp"
#include "device/run.hpp"

using namespace warpnet;

namespace {
constexpr uint64_t kSeed = 2026;  // printed with every case
}  // namespace

TEST_CASE("gpu: every CUDA kernel matches its CPU reference at the op's test sizes") {
  const auto all = device::kernels(device::Copy::cuda);
  REQUIRE(!all.empty());
  const device::gpu::Info gpu = device::gpu::probe();
  for (const device::Kernel* kernel : all) {
    const device::Op& op = device::op(kernel->op);
    if (const std::string why = device::cannot_run_on(*kernel, gpu.cc_major, gpu.cc_minor); !why.empty()) {
      std::printf("%-28s skipped: %s\n", kernel->id().c_str(), why.c_str());
      continue;
    }
    int passed = 0;
    for (const device::Sizes& sizes : op.test_sizes) {
      const std::string what = cat(kernel->id(), " at ", device::describe_sizes(op, sizes), ", seed ", kSeed);
      INFO(what);
      Rng rng(kSeed);
      const auto inputs = device::make_inputs(*kernel, sizes, rng);
      std::vector<Tensor> got;
      try {
        got = device::gpu::run(*kernel, sizes, inputs, 30);
      } catch (const device::gpu::Failure& f) {
        FAIL_CHECK(f.what());
        // A sticky error (illegal address, hang) leaves no usable context: nothing after it can run.
        REQUIRE_MESSAGE(!f.context_lost, "the CUDA context is lost; the remaining kernels cannot be checked");
        continue;
      }
      const device::Comparison c = device::compare(*kernel, sizes, inputs, got);
      if (c.mismatches)
        std::printf("%s: %lld of %lld wrong\n%s", what.c_str(), (long long)c.mismatches, (long long)c.checked,
                    c.first.c_str());
      CHECK(c.mismatches == 0);
      CHECK(c.checked == device::total_elements(op.output_shapes(sizes)));
      passed += c.mismatches == 0;
    }
    std::printf("%-28s %2d of %zu test sizes match\n", kernel->id().c_str(), passed, op.test_sizes.size());
  }
}

TEST_CASE("gpu: version 0 of matmul is cuBLAS for fp32, fp16 and bf16 inputs, cuBLASLt for fp8 e4m3") {
  CHECK(device::find_kernel("matmul/00_cublas", device::Copy::cuda).input_format == nullptr);
  CHECK(device::find_kernel("matmul/00_cublas_fp16", device::Copy::cuda).input_format == &simt::kHalf);
  CHECK(device::find_kernel("matmul/00_cublas_bf16", device::Copy::cuda).input_format == &simt::kBfloat16);
  CHECK(device::find_kernel("matmul/00_cublaslt_fp8", device::Copy::cuda).input_format == &simt::kE4M3);
}
