// Barrier divergence and collective misuse end in an error naming kernel,
// block and thread — never a hang.
#include <doctest/doctest.h>

#include "tests/simt/device_buffer.hpp"
#include "kernels/examples/bugs/divergent_barrier.cu"

using warpnet::simt::LaunchError;

namespace {

// Lane 0 waits at the block barrier while the rest of its warp waits for it in a shuffle.
__global__ void barrier_against_shuffle(int* out) {
  const int lane = threadIdx.x;
  int v = lane;
  if (lane == 0) __syncthreads();
  else v = __shfl_sync(0xffffffffu, v, 0);
  out[lane] = v;
}

// Threads of one block wait at two different __syncthreads() calls.
__global__ void two_barriers(int* out) {
  if (threadIdx.x < 16) {
    out[threadIdx.x] = 1;
    __syncthreads();
  } else {
    out[threadIdx.x] = 2;
    __syncthreads();
    out[threadIdx.x] = 3;
  }
}

// Lanes past n return early, but the full-warp reduction still names them.
__global__ void exited_lane_in_mask(const float* in, float* out, int n) {
  const int i = threadIdx.x;
  if (i >= n) return;
  float v = in[i];
  v += __shfl_down_sync(0xffffffffu, v, 1);
  out[i] = v;
}

cudaError_t code_of(const LaunchError& e) { return e.code(); }

}  // namespace

TEST_CASE("a __syncthreads() some threads never reach is reported as a deadlock") {
  DeviceBuffer<float> data(std::vector<float>(64, 1.0f));
  try {
    warpnet::simt::launch(divergent_barrier, dim3(1), dim3(64), 0, data.get());
    FAIL("the launch should not complete");
  } catch (const LaunchError& e) {
    CHECK(code_of(e) == cudaErrorLaunchTimeout);
    const std::string message = e.what();
    INFO(message);
    CHECK(message.starts_with("kernel divergent_barrier, block (0,0,0), thread (0,0,0): deadlock: this thread and 31 "
                              "others wait at __syncthreads()"));
    CHECK(message.find("thread (32,0,0) and 31 others have exited") != std::string::npos);
  }
}

TEST_CASE("a warp collective waiting for a lane parked at the barrier is a deadlock") {
  DeviceBuffer<int> out(32);
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(barrier_against_shuffle, dim3(1), dim3(32), 0, out.get()),
                       doctest::Contains("thread (1,0,0): deadlock: this thread waits in __shfl_sync"), LaunchError);
}

TEST_CASE("threads at different __syncthreads() calls are barrier divergence") {
  DeviceBuffer<int> out(32);
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(two_barriers, dim3(1), dim3(32), 0, out.get()),
                       doctest::Contains("barrier divergence"), LaunchError);
}

TEST_CASE("a shuffle naming an exited lane is an error, the CUDA-style launch records it") {
  DeviceBuffer<float> in(std::vector<float>(32, 1.0f)), out(32);
  warpnet::launch_kernel(exited_lane_in_mask, dim3(1), dim3(32), 0, in.get(), out.get(), 20);
  CHECK(cudaGetLastError() == cudaErrorLaunchFailure);
  CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);  // a fault shows at the next sync too
  CHECK(std::string(warpnet::simt::last_error_message()).find("names lane 20 in its mask 0xffffffff, but that "
                                                              "thread has exited") != std::string::npos);
  warpnet::launch_kernel(exited_lane_in_mask, dim3(1), dim3(32), 0, in.get(), out.get(), 32);
  CHECK(cudaGetLastError() == cudaSuccess);
}
