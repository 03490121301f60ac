// The dist suite's main: it runs the real `warpnet` under mpirun, so without
// mpirun, or with a warpnet built without MPI, it says which and exits 77,
// which CTest reports as skipped (SKIP_RETURN_CODE in tests/CMakeLists.txt),
// never as passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/dist/dist_support.hpp"

int main(int argc, char** argv) {
  using namespace warpnet;
  using namespace warpnet::test;
  const char* bin = std::getenv("WARPNET_BIN");
  if (!bin || !*bin) {
    std::printf("dist: WARPNET_BIN must name the warpnet binary (CTest sets it)\n");
    return 1;
  }
  const std::string mpiexec = mpiexec_path();
  if (mpiexec.empty() || ::access(mpiexec.c_str(), X_OK) != 0) {
    std::printf("SKIP: mpirun not found (CMake's MPIEXEC_EXECUTABLE is '%s'): install openmpi-bin "
                "(scripts/setup.sh) to run the data-parallel tests\n",
                mpiexec.c_str());
    return 77;
  }
  // A warpnet built without MPI says so when asked for --data-parallel.
  const Run probe = run(cat(bin, " train --data-parallel --model mlp --data spirals --limit 4 --epochs 1 "
                                 "--batch-size 4 --threads 1"));
  if (probe.output.find("built without MPI") != std::string::npos) {
    std::printf("SKIP: this warpnet was built without MPI (install libopenmpi-dev and configure again)\n");
    return 77;
  }
  std::printf("mpirun: %s\n", mpiexec.c_str());
  doctest::Context context(argc, argv);
  return context.run();
}
