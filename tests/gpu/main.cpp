// The gpu suite's main: without a usable GPU (no driver, as on CI; no device;
// a build without the toolkit) it says why and exits 77, which CTest reports
// as skipped (SKIP_RETURN_CODE in tests/CMakeLists.txt), never as passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "device/cuda/gpu.hpp"

int main(int argc, char** argv) {
  const warpnet::device::gpu::Info info = warpnet::device::gpu::probe();
  if (!info.usable) {
    std::printf("SKIP: %s\n", info.why_not.c_str());
    return 77;
  }
  std::printf("GPU: %s (sm_%d%d, %d SMs), driver %s, runtime %s, cuBLAS %s\n", info.name.c_str(), info.cc_major,
              info.cc_minor, info.multiprocessors, info.driver.c_str(), info.runtime.c_str(), info.cublas.c_str());
  doctest::Context context(argc, argv);
  return context.run();
}
