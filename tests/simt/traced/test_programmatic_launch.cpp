// Programmatic dependent launch on the emulator: grids run one after another
// there, so what it checks is the rule a GPU leaves to the kernel. A
// dependent launch (launch_dependent_kernel) made while
// warpnet::programmatic_launches() is on may, on a GPU, run while the kernel
// before it still does, so each of its threads must call
// wait_for_prior_grids() before it touches global memory. A traced block
// reading or writing global memory first is an error naming the thread and
// the access; the same kernel launched the ordinary way (launch_kernel, even
// while programmatic launches are on, or launch_dependent_kernel while they
// are off), or a kernel that waits first (the ReLU of device::launch_floor),
// runs clean, and a launch captured into a graph keeps its kind for every
// replay. Compiled with warpnet_simt_traced.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kernels/elementwise/02_vectorized.cu"
#include "tests/simt/device_buffer.hpp"

using warpnet::simt::LaunchError;

namespace {

// y = x, one element per thread; n = 32. Waits for the prior grids only
// after it has copied: wrong for a programmatic launch.
__global__ void copies_then_waits(const float* x, float* y) {
  y[threadIdx.x] = x[threadIdx.x];
  warpnet::wait_for_prior_grids();
}

// The same, waiting first.
__global__ void waits_then_copies(const float* x, float* y) {
  warpnet::allow_dependent_grids();
  warpnet::wait_for_prior_grids();
  y[threadIdx.x] = x[threadIdx.x];
}

// programmatic_launches() on for a scope, off again after it.
struct ProgrammaticScope {
  ProgrammaticScope() { warpnet::programmatic_launches() = true; }
  ~ProgrammaticScope() { warpnet::programmatic_launches() = false; }
};

// What the launch left for cudaGetLastError(): "" when the launch ran clean.
std::string last_error() {
  const cudaError_t code = cudaGetLastError();
  return code == cudaSuccess ? "" : warpnet::simt::last_error_message();
}

std::vector<float> ramp() {
  std::vector<float> v(32);
  for (int i = 0; i < 32; ++i) v[size_t(i)] = float(i - 16);
  return v;
}

}  // namespace

TEST_CASE("a programmatic launch that touches global memory before waiting is named; one that waits runs clean") {
  DeterministicScope deterministic;
  DeviceBuffer<float> x(ramp()), y(32);
  {
    ProgrammaticScope programmatic;
    warpnet::launch_dependent_kernel(copies_then_waits, dim3(1), dim3(32), 0, x.get(), y.get());
    const std::string error = last_error();
    CHECK(error.find("copies_then_waits") != std::string::npos);
    CHECK(error.find("thread (0,0,0)") != std::string::npos);
    CHECK(error.find("global-memory read of 4 bytes") != std::string::npos);
    CHECK(error.find("before wait_for_prior_grids()") != std::string::npos);
    CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);  // a fault while running, as on a GPU; taken here

    warpnet::launch_dependent_kernel(waits_then_copies, dim3(1), dim3(32), 0, x.get(), y.get());
    CHECK(last_error() == "");
    CHECK(y.download() == ramp());
    // An ordinary launch stays one while programmatic launches are on.
    warpnet::launch_kernel(copies_then_waits, dim3(1), dim3(32), 0, x.get(), y.get());
    CHECK(last_error() == "");

    // The ReLU device::launch_floor chains as programmatic launches.
    DeviceBuffer<float> r(32);
    warpnet::launch_dependent_kernel(unary_vectorized<256, warpnet::Relu>, dim3(1), dim3(256), 0, 32, x.get(),
                                     r.get());
    CHECK(last_error() == "");
    std::vector<float> want = ramp();
    for (float& v : want) v = v > 0 ? v : 0.0f;
    CHECK(r.download() == want);
  }
  // The dependent launch of the kernel that copies first is fine while
  // programmatic launches are off.
  warpnet::launch_dependent_kernel(copies_then_waits, dim3(1), dim3(32), 0, x.get(), y.get());
  CHECK(last_error() == "");
}

TEST_CASE("a programmatic launch captured into a graph is checked at every replay") {
  DeterministicScope deterministic;
  DeviceBuffer<float> x(ramp()), y(32);
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  {
    ProgrammaticScope programmatic;  // as StepGraph::Launches::programmatic captures
    warpnet::launch_stream() = stream;
    warpnet::launch_dependent_kernel(copies_then_waits, dim3(1), dim3(32), 0, x.get(), y.get());
    warpnet::launch_stream() = nullptr;
  }
  REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);  // recorded, not run
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  CHECK(cudaGraphLaunch(exec, stream) != cudaSuccess);  // the replay runs it, programmatic off by now
  CHECK(warpnet::simt::last_error_message().find("before wait_for_prior_grids()") != std::string::npos);
  (void)cudaGetLastError();
  CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}
