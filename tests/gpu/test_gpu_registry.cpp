// Every kernel of the CUDA copy, on the real GPU, against its op's CPU
// reference at the op's test sizes (every layout the op lists): what
// tests/simt/test_registry.cpp does through the emulator. Outputs are
// poisoned with NaN before each run (gpu::Problem::run), so an element a
// kernel never writes fails. A version with candidates is tuned at each
// size first, which checks them all. A new kernel is checked here with no
// edit.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "device/cuda/gpu.hpp"
#include "device/run.hpp"

using namespace warpnet;

namespace {
constexpr uint64_t kSeed = 2026;  // printed with every case

// One kernel at one size on the GPU against the CPU reference: true when
// every element is within the op's bound. A sticky error ends the test.
bool matches_on_gpu(const device::Kernel& kernel, const device::Sizes& sizes) {
  const device::Op& op = device::op(kernel.op);
  const std::string what = cat(kernel.id(), " at ", device::describe_sizes(op, sizes), ", seed ", kSeed);
  INFO(what);
  // A version that picks one of its candidates (matmul/10, the autotuned
  // conv versions, conv2d_nhwc v14 to v16's tiles) runs what its tune
  // picks, as in training and `warpnet bench`. The tune checks every
  // candidate it times against the definition, every element at these
  // sizes (gpu_timing::kVerifyAllProducts), and throws at a wrong one, so
  // here each one is checked at the awkward test sizes, not only the
  // choice. lenet5_step/01's tune instead compares its block sizes' bits
  // with 512 threads' (the step's sums keep their order whatever the
  // block) and does not time one that differs, which its line says; that
  // fails here, as a wrong candidate does.
  if (kernel.tune && kernel.candidate) {
    try {
      const std::string tuned = kernel.tune(sizes);
      CHECK_MESSAGE(tuned.find("other bits") == std::string::npos, tuned);
    } catch (const Error& e) {
      FAIL_CHECK(e.what());
      return false;
    }
  }
  Rng rng(kSeed);
  const auto inputs = device::make_inputs(kernel, sizes, rng);
  std::vector<Tensor> got;
  try {
    got = device::gpu::run(kernel, sizes, inputs, 30);
  } catch (const device::gpu::Failure& f) {
    FAIL_CHECK(f.what());
    // A sticky error (illegal address, hang) leaves no usable context: nothing after it can run.
    REQUIRE_MESSAGE(!f.context_lost, "the CUDA context is lost; the remaining kernels cannot be checked");
    return false;
  }
  const device::Comparison c = device::compare(kernel, sizes, inputs, got);
  if (c.mismatches)
    std::printf("%s: %lld of %lld wrong\n%s", what.c_str(), (long long)c.mismatches, (long long)c.checked,
                c.first.c_str());
  CHECK(c.mismatches == 0);
  CHECK(c.checked == device::total_elements(op.output_shapes(sizes)));
  return c.mismatches == 0;
}

}  // namespace

TEST_CASE("gpu: every CUDA kernel matches its CPU reference at the op's test sizes") {
  auto all = device::kernels(device::Copy::cuda);
  REQUIRE(!all.empty());
  // The sm_90a kernels (TMA, mbarriers, wgmma, clusters) last: a hang or a
  // fault loses the context for every kernel after it, and these are the
  // ones most likely to, so the rest are checked whatever they do.
  std::stable_partition(all.begin(), all.end(), [](const device::Kernel* k) { return !k->arch_specific; });
  const device::gpu::Info gpu = device::gpu::probe();
  for (const device::Kernel* kernel : all) {
    const device::Op& op = device::op(kernel->op);
    if (const std::string why = device::cannot_run_on(*kernel, gpu.cc_major, gpu.cc_minor); !why.empty()) {
      std::printf("%-28s skipped: %s\n", kernel->id().c_str(), why.c_str());
      continue;
    }
    int passed = 0;
    for (const device::Sizes& sizes : op.test_sizes) passed += matches_on_gpu(*kernel, sizes);
    std::printf("%-28s %2d of %zu test sizes match\n", kernel->id().c_str(), passed, op.test_sizes.size());
  }
}

// The op's test sizes are small enough for the emulator: on an H200's 132
// SMs every persistent block gets one tile, K = 328 is 3 of fp8's 128-wide
// k-steps, under v15's 7 stages and v18's 4, and K <= 128 never refills
// a stage of v17's 4-stage ring. Here 1104 x 3904 makes 9 x 16 = 144 tiles
// of 128 x 256 (two for some blocks of v16, v18, v19 and v20, whose rings then run on
// across tiles; neither extent a tile multiple) and K = 1280 ten fp8
// k-steps, 20 bf16 ones and 40 of v17's and v23's: every ring goes round
// more than once (v24's tune runs and checks each of its candidates there).
// In all four layouts: every extent is a multiple of 8, so v13 and v16
// describe each operand to wgmma as it is stored, and the fp8 GEMMs pack A
// and B into the (M,K) and (N,K) they take where they are not.
TEST_CASE("gpu: the Hopper and multistage GEMMs with more tiles than SMs and more k-steps than stages") {
  const device::gpu::Info gpu = device::gpu::probe();
  // The cluster versions (21, 22) last: their cluster barriers and remote
  // arrives have not yet run on a GPU, and a hang would leave the rest unchecked.
  for (const char* id : {"matmul/13", "matmul/15", "matmul/16", "matmul/17", "matmul/18", "matmul/19", "matmul/20",
                         "matmul/23", "matmul/24", "matmul/21", "matmul/22"}) {
    const device::Kernel& kernel = device::find_kernel(id, device::Copy::cuda);
    if (const std::string why = device::cannot_run_on(kernel, gpu.cc_major, gpu.cc_minor); !why.empty()) {
      MESSAGE(id, " skipped: ", why);
      continue;
    }
    int passed = 0;
    for (int64_t trans_a : {0, 1})
      for (int64_t trans_b : {0, 1}) passed += matches_on_gpu(kernel, {1104, 3904, 1280, trans_a, trans_b});
    std::printf("%-28s %d of 4 layouts match at 1104x3904x1280\n", id, passed);
  }
}

// conv v13 to v16 at their test sizes give every persistent block of an
// H200 one tile at most, and most of their rings fewer k-steps than stages.
// These layers have more tiles than 132 SMs and 9 or more k-steps a tile,
// at each tile width, so each block's ring runs on from tile to tile, with
// its phases, as at the bench's sizes; the im2col copies of v14 to v16
// cross rows and images as they do there, and v15's clusters share w by
// multicast. v14, v15 and v16 have two tiles each, and matches_on_gpu runs
// their tunes first: both tiles timed on random inputs and checked against
// the definition (256 sampled outputs at these sizes), the faster one kept
// and then checked here. Their rules (conv_v14::
// consumers_for, v15's over pairs, conv_v16::rows_per_thread) pick, on an
// H200:
// - for the first three, v14's and v15's three consumer warpgroups and v16's short
//   tiles: 16 images of 56x56 at K = 64 (262 tiles of 192 x 64 in both;
//   v13: 448 of 128 pixels x 64), 24 of 28x28 at K = 128 (v14: 98 of 192 x
//   128, one a block; v16: 196 of 96 x 128), 96 of 14x14 at K = 256 (v14:
//   196 of 192 x 128; v16: 196 of 96 x 256, the setmaxnreg split);
// - for the last three, the tall tiles and two consumers: 17 of 56x56 at
//   K = 64 (209 of 256 x 64), 9 at K = 128 (221 of 128 x 128), 9 at K = 256
//   (221 of 128 x 256, the setmaxnreg split; odd, so v15's last pair has a
//   tile past the pixels).
// The line printed names the tile each layer ran (Kernel::candidate).
TEST_CASE("gpu: conv v13 to v16 with more tiles than SMs, at each of their tile widths") {
  const device::gpu::Info gpu = device::gpu::probe();
  const std::vector<device::Sizes> layers = {
      {16, 64, 56, 56, 64, 3, 3, 1, 1, 1}, {24, 64, 28, 28, 128, 3, 3, 1, 1, 1}, {96, 32, 14, 14, 256, 3, 3, 1, 1, 1},
      {17, 64, 56, 56, 64, 3, 3, 1, 1, 1}, {9, 64, 56, 56, 128, 3, 3, 1, 1, 1},  {9, 32, 56, 56, 256, 3, 3, 1, 1, 1}};
  for (const char* id : {"conv2d_nhwc/13", "conv2d_nhwc/14", "conv2d_nhwc/15", "conv2d_nhwc/16"}) {
    const device::Kernel& kernel = device::find_kernel(id, device::Copy::cuda);
    if (const std::string why = device::cannot_run_on(kernel, gpu.cc_major, gpu.cc_minor); !why.empty()) {
      MESSAGE(id, " skipped: ", why);
      continue;
    }
    int passed = 0;
    std::string tiles;
    for (const device::Sizes& sizes : layers) {
      passed += matches_on_gpu(kernel, sizes);
      if (kernel.candidate) tiles += cat(tiles.empty() ? "; tiles: " : ", ", kernel.candidate(sizes));
    }
    std::printf("%-28s %d of %zu layers match with more tiles than SMs%s\n", id, passed, layers.size(),
                tiles.c_str());
  }
}

// The fp8 GEMMs are checked against a bound widened 2^10 times (a 14-bit
// accumulator's), which at K = 1280 is about four times a typical output:
// a lost or doubled k-step hides under it. Whole numbers in [-2, 2] are
// exact in e4m3, their products too, and every partial sum stays within
// 4·1280 = 5120 < 2^13, exact even in 14 bits: equality, at the size
// whose rings go round more than once.
TEST_CASE("gpu: the fp8 GEMMs sum whole numbers exactly at the large size") {
  const device::gpu::Info gpu = device::gpu::probe();
  const device::Sizes sizes{1100, 3900, 1280, 0, 1};  // A (M,K), B stored (N,K)
  Rng rng(kSeed);
  const auto whole = [&](int64_t rows, int64_t cols) {
    Tensor t = Tensor::empty({rows, cols});
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = float(int64_t(rng.below(5)) - 2);
    return t;
  };
  const std::vector<Tensor> inputs{whole(sizes[0], sizes[2]), whole(sizes[1], sizes[2])};
  const Tensor want = device::op("matmul").reference(sizes, inputs)[0].to(DType::f64);
  for (const char* id : {"matmul/00_cublaslt_fp8", "matmul/15", "matmul/18", "matmul/22"}) {
    const device::Kernel& kernel = device::find_kernel(id, device::Copy::cuda);
    if (const std::string why = device::cannot_run_on(kernel, gpu.cc_major, gpu.cc_minor); !why.empty()) {
      MESSAGE(id, " skipped: ", why);
      continue;
    }
    INFO(id);
    const std::vector<Tensor> got = device::gpu::run(kernel, sizes, inputs, 30);
    REQUIRE(got.size() == 1);
    const Tensor exact = got[0].to(DType::f64);
    int64_t wrong = 0;
    for (int64_t i = 0; i < want.numel(); ++i) wrong += exact.data<double>()[i] != want.data<double>()[i];
    CHECK(wrong == 0);
  }
}

TEST_CASE("gpu: version 0 of matmul is cuBLAS for fp32, fp16 and bf16 inputs, cuBLASLt for fp8 e4m3") {
  CHECK(device::find_kernel("matmul/00_cublas", device::Copy::cuda).input_format == nullptr);
  CHECK(device::find_kernel("matmul/00_cublas_fp16", device::Copy::cuda).input_format == &simt::kHalf);
  CHECK(device::find_kernel("matmul/00_cublas_bf16", device::Copy::cuda).input_format == &simt::kBfloat16);
  CHECK(device::find_kernel("matmul/00_cublaslt_fp8", device::Copy::cuda).input_format == &simt::kE4M3);
}
