// Barrier divergence and collective misuse end in an error naming kernel,
// block and thread — never a hang.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

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

// Lanes past n return early, but the full-warp reduction still names them:
// allowed (exited lanes take no part), until a live lane reads one.
__global__ void exited_lane_in_mask(const float* in, float* out, int n) {
  const int i = threadIdx.x;
  if (i >= n) return;
  float v = in[i];
  v += __shfl_down_sync(0xffffffffu, v, 1);
  out[i] = v;
}

// Lanes past n return; the others vote with the whole warp's mask and sync:
// legal, since exited lanes take no part (the Programming Guide's warp vote
// functions: "all non-exited threads named in mask").
__global__ void vote_after_exit(unsigned* out, int n) {
  const int i = threadIdx.x;
  if (i >= n) return;
  const unsigned even = __ballot_sync(0xffffffffu, i % 2 == 0);
  const int all_live = __all_sync(0xffffffffu, i < n);
  __syncwarp();
  out[i] = all_live ? even : 0;
}

// Thread 0 waits for a flag that thread 32, another warp, sets: on a GPU
// since Volta the other warp runs and the wait ends; the emulator runs
// thread 0 until it blocks, which it never does.
__global__ void spin_on_flag(int* out) {
  __shared__ volatile int flag;
  if (threadIdx.x == 32) flag = 1;
  if (threadIdx.x == 0) {
    while (flag == 0) {
    }
    out[0] = 1;
  }
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

TEST_CASE("a shuffle reading an exited lane is an error, the CUDA-style launch records it") {
  DeviceBuffer<float> in(std::vector<float>(32, 1.0f)), out(32);
  warpnet::launch_kernel(exited_lane_in_mask, dim3(1), dim3(32), 0, in.get(), out.get(), 20);
  CHECK(cudaGetLastError() == cudaErrorLaunchFailure);
  CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);  // a fault shows at the next sync too
  CHECK(std::string(warpnet::simt::last_error_message()).find("thread (19,0,0): __shfl_down_sync at") !=
        std::string::npos);
  CHECK(std::string(warpnet::simt::last_error_message()).find("reads lane 20, which has exited") != std::string::npos);
  warpnet::launch_kernel(exited_lane_in_mask, dim3(1), dim3(32), 0, in.get(), out.get(), 32);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("exited lanes named in a mask take no part: a ballot, an all and a __syncwarp after an early return") {
  DeviceBuffer<unsigned> out(std::vector<unsigned>(32, 7u));
  REQUIRE_NOTHROW(warpnet::simt::launch(vote_after_exit, dim3(1), dim3(32), 0, out.get(), 20));
  const std::vector<unsigned> got = out.download();
  for (int i = 0; i < 32; ++i) {
    INFO("lane ", i);
    CHECK(got[size_t(i)] == (i < 20 ? 0x55555u : 7u));  // the even lanes below 20; exited lanes wrote nothing
  }
}

// Run only by the next test, in a process of its own: it never returns.
TEST_CASE("spin-wait child: a launch that never yields" * doctest::skip()) {
  DeviceBuffer<int> out(1);
  warpnet::simt::launch(spin_on_flag, dim3(1), dim3(64), 0, out.get());
  FAIL("the spinning launch returned");
}

TEST_CASE("a spin-wait ends the process after WARPNET_SIMT_HANG_TIMEOUT, naming the kernel, instead of hanging") {
  // The test binary runs the child case above with a 1 s watchdog (and
  // `timeout` in case the watchdog fails: then the status is 137, not 124).
  const std::string command =
      "WARPNET_SIMT_HANG_TIMEOUT=1 timeout -s KILL 60 /proc/" + std::to_string(::getpid()) +
      "/exe --no-skip -tc='spin-wait child*' 2>&1";
  FILE* child = ::popen(command.c_str(), "r");
  REQUIRE(child);
  std::string output;
  std::array<char, 512> chunk{};
  while (std::fgets(chunk.data(), int(chunk.size()), child)) output += chunk.data();
  const int status = ::pclose(child);
  INFO(output);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 124);
  CHECK(output.find("spin_on_flag: no thread has switched") != std::string::npos);
  CHECK(output.find("spin-wait") != std::string::npos);
}
