// `x += y` is a load and a store of x: the traced build sees both (GCC's
// -fsanitize=thread instrumentation; kernel-address checked one reference once
// per basic block and lost the store). The classic reduction race lives in that
// store. Compiled with warpnet_simt_traced.
#include <doctest/doctest.h>

#include <numeric>

#include "simt/trace.hpp"
#include "tests/simt/device_buffer.hpp"

namespace {
#include "kernels/examples/access_patterns.cu"
#include "kernels/examples/bugs/reduction_missing_sync.cu"
}  // namespace

using warpnet::simt::KernelTrace;
using warpnet::simt::LaunchError;
using warpnet::simt::Space;

namespace {

KernelTrace last() {
  const auto trace = warpnet::simt::last_trace();
  REQUIRE(trace.has_value());
  return *trace;
}

}  // namespace

TEST_CASE("traced: a tree reduction missing its __syncthreads() is a race on the += store") {
  DeterministicScope deterministic;
  DeviceBuffer<float> in(std::vector<float>(256, 1.0f)), out(1);
  std::string message;
  try {
    warpnet::simt::launch(reduce_missing_sync, dim3(1), dim3(256), 0, in.get(), out.get());
  } catch (const LaunchError& e) {
    CHECK(e.code() == cudaErrorLaunchFailure);
    message = e.what();
  }
  INFO(message);
  // Lane 0 runs all its steps first (nothing parks it), reading sdata[1] at
  // step s = 1; lane 1 then writes sdata[1] at step s = 128 with neither a
  // __syncthreads() nor a __syncwarp() between: the write is what is reported.
  CHECK(message.starts_with("kernel reduce_missing_sync, block (0,0,0), thread (1,0,0): shared-memory race on "
                            "`sdata`[byte 4]"));
  CHECK(message.find("this thread writes it at kernels/examples/bugs/reduction_missing_sync.cu:24") !=
        std::string::npos);
  CHECK(message.find("and thread (0,0,0) read it at kernels/examples/bugs/reduction_missing_sync.cu:24") !=
        std::string::npos);
}

TEST_CASE("traced: the tree reduction with its barriers runs clean; its += stores are counted") {
  DeterministicScope deterministic;
  std::vector<float> values(2 * 256);
  std::iota(values.begin(), values.end(), 0.0f);
  DeviceBuffer<float> in(values), out(2);
  warpnet::simt::launch(reduce_sum, dim3(2), dim3(256), 0, in.get(), out.get());
  const auto sums = out.download();
  CHECK(sums[0] == 255.0f * 256 / 2);
  CHECK(sums[1] == 256.0f * 256 + 255.0f * 256 / 2);

  // Per block of 8 warps: the first store is 8 requests; the steps s = 128, 64,
  // 32, ..., 1 have 4, 2, 1, 1, 1, 1, 1, 1 warps with active lanes, each
  // loading sdata[t] and sdata[t + s] and storing sdata[t]; thread 0 loads sdata[0].
  const KernelTrace trace = last();
  const auto store = trace.total(Space::shared, true);
  const auto load = trace.total(Space::shared, false);
  CHECK(store.requests == 2 * (8 + 12));
  CHECK(load.requests == 2 * (2 * 12 + 1));
  CHECK(store.wavefronts == store.requests);  // consecutive words: no bank conflicts
  // Steps with fewer than 32 active threads: the rest of the warp skipped the store.
  CHECK(store.inactive_lanes == 2 * (16 + 24 + 28 + 30 + 31));
}

TEST_CASE("trace: out[i] += in[i] is two global loads and one store per warp, 4 sectors each") {
  DeterministicScope deterministic;
  const int n = 256;
  DeviceBuffer<float> in(std::vector<float>(n, 1.0f)), out(std::vector<float>(n, 2.0f));
  warpnet::simt::launch(accumulate, dim3(n / 128), dim3(128), 0, in.get(), out.get(), n);
  const KernelTrace trace = last();
  const auto load = trace.total(Space::global, false);
  const auto store = trace.total(Space::global, true);
  CHECK(load.requests == 2 * (n / 32));
  CHECK(load.sectors == 4 * load.requests);
  CHECK(store.requests == n / 32);
  CHECK(store.sectors == 4 * store.requests);
  CHECK(store.ideal_sectors == store.sectors);
  CHECK(out.download()[7] == 3.0f);
}
