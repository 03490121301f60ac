// Barrier divergence and collective misuse end in an error naming kernel,
// block and thread — never a hang.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

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
// allowed (exited lanes take no part); a live lane that reads one gets an
// undefined value (NaN here).
__global__ void exited_lane_in_mask(const float* in, float* out, int n) {
  const int i = threadIdx.x;
  if (i >= n) return;
  float v = in[i];
  v += __shfl_down_sync(0xffffffffu, v, 1);
  out[i] = v;
}

// The same sum with its tail guarded: the value read from a lane past n is
// discarded, as correct code on a GPU may do (it is undefined there).
__global__ void guarded_tail(const float* in, float* out, int n, int delta) {
  const int i = threadIdx.x;
  if (i >= n) return;
  float v = in[i];
  const float next = __shfl_down_sync(0xffffffffu, v, delta);
  if (i + (delta & 31) < n) v += next;
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
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  if (threadIdx.x == 32) flag = 1;
  if (threadIdx.x == 0) {
    while (flag == 0) {
    }
    out[0] = 1;
  }
}

// The same wait with a __nanosleep() in its loop (the CUDA C++ Programming
// Guide's way to back off): the sleeping thread lets thread 32 run, here too.
__global__ void sleep_on_flag(int* out) {
  __shared__ volatile int flag;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  if (threadIdx.x == 32) flag = 1;
  if (threadIdx.x == 0) {
    int naps = 0;
    while (flag == 0) {
      __nanosleep(100);
      ++naps;
    }
    out[0] = naps;
  }
}

// Thread 0 sleeps in a loop for a flag no thread sets: a hang on a GPU.
__global__ void sleep_for_ever(int* out) {
  __shared__ volatile int flag;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  if (threadIdx.x == 0) {
    while (flag == 0) __nanosleep(100);
    out[0] = 1;
  }
}

// Each thread busy for `seconds` of wall time, with no barrier: long work
// the watchdog must not take for a hang (emulator-only: it reads a host clock).
__global__ void busy_threads(int* out, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
  }
  out[threadIdx.x] = 1;
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

TEST_CASE("a shuffle reading an exited lane gets an undefined value, NaN here: used, it shows; discarded, it is fine") {
  DeviceBuffer<float> in(std::vector<float>(32, 1.0f)), out(32);
  warpnet::launch_kernel(exited_lane_in_mask, dim3(1), dim3(32), 0, in.get(), out.get(), 20);
  REQUIRE(cudaGetLastError() == cudaSuccess);  // undefined on a GPU is the value, not the program
  std::vector<float> got = out.download();
  for (int i = 0; i < 19; ++i) CHECK(got[size_t(i)] == 2.0f);
  CHECK(std::isnan(got[19]));  // lane 19 read lane 20, which had exited
  warpnet::launch_kernel(guarded_tail, dim3(1), dim3(32), 0, in.get(), out.get(), 20, 1);
  REQUIRE(cudaGetLastError() == cudaSuccess);
  got = out.download();
  for (int i = 0; i < 19; ++i) CHECK(got[size_t(i)] == 2.0f);
  CHECK(got[19] == 1.0f);
  // The hardware takes a delta's low 5 bits: 33 is 1.
  warpnet::launch_kernel(guarded_tail, dim3(1), dim3(32), 0, in.get(), out.get(), 32, 33);
  REQUIRE(cudaGetLastError() == cudaSuccess);
  got = out.download();
  for (int i = 0; i < 31; ++i) CHECK(got[size_t(i)] == 2.0f);
  CHECK(got[31] == 1.0f);
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

namespace {

// A child run of one of the cases below, with a 1 s watchdog (and `timeout`
// in case the watchdog fails to act: then the status is a kill, not 124).
struct ChildRun {
  int status = 0;
  std::string output;
};
ChildRun run_child(const std::string& test_case) {
  const std::string command = "WARPNET_SIMT_HANG_TIMEOUT=1 timeout -s KILL 60 /proc/" + std::to_string(::getpid()) +
                              "/exe --no-skip -tc='" + test_case + "' 2>&1";
  FILE* child = ::popen(command.c_str(), "r");
  REQUIRE(child);
  ChildRun run;
  std::array<char, 512> chunk{};
  while (std::fgets(chunk.data(), int(chunk.size()), child)) run.output += chunk.data();
  run.status = ::pclose(child);
  return run;
}

// Runs a child case that must end the process with `status` (124, or 128 +
// a signal, as a shell shows it) after printing each of `says`.
void check_child_ends(const std::string& test_case, int status, std::initializer_list<std::string> says) {
  const ChildRun run = run_child(test_case);
  INFO(run.output);
  REQUIRE(WIFEXITED(run.status));
  CHECK(WEXITSTATUS(run.status) == status);
  for (const std::string& text : says) CHECK(run.output.find(text) != std::string::npos);
}

}  // namespace

// Run only through run_child: it never returns.
TEST_CASE("spin-wait child: a launch that never yields" * doctest::skip()) {
  DeviceBuffer<int> out(1);
  warpnet::simt::launch(spin_on_flag, dim3(1), dim3(64), 0, out.get());
  FAIL("the spinning launch returned");
}

// Run only through run_child: it never returns.
TEST_CASE("sleep child: a launch whose thread sleeps for ever" * doctest::skip()) {
  DeviceBuffer<int> out(1);
  warpnet::simt::launch(sleep_for_ever, dim3(1), dim3(64), 0, out.get());
  FAIL("the sleeping launch returned");
}

// Run only through run_child: 16 threads, each busy for 0.2 s with no
// barrier, 3.2 s in all: longer than the timeout, but each end is progress.
TEST_CASE("busy child: a launch whose threads each run long" * doctest::skip()) {
  DeviceBuffer<int> out(16);
  warpnet::simt::launch(busy_threads, dim3(1), dim3(16), 0, out.get(), 0.2);
  CHECK(out.download() == std::vector<int>(16, 1));
  std::printf("busy child: the launch returned\n");  // the parent's proof that this case ran
}

namespace {
__global__ void divide_by(const int* divisor, int* out) { out[threadIdx.x] = 100 / divisor[threadIdx.x]; }
}  // namespace

// Run only through run_child: thread 3 divides by zero.
TEST_CASE("division child: an integer division by zero in a kernel" * doctest::skip()) {
  DeviceBuffer<int> divisor(std::vector<int>{1, 2, 4, 0, 5}), out(5);
  warpnet::simt::launch(divide_by, dim3(1), dim3(5), 0, divisor.get(), out.get());
  FAIL("the launch returned");
}

TEST_CASE("an integer division by zero in a kernel ends the process naming the thread, not a bare SIGFPE") {
  check_child_ends("division child*", 128 + SIGFPE,
                   {"kernel divide_by, block (0,0,0), thread (3,0,0): integer division by zero (or INT_MIN / -1) "
                    "(SIGFPE) at divide_by",
                    "guard the divisor"});
}

namespace {
// Thread 2 writes through a null pointer (an output never allocated).
__global__ void write_null(int* out) {
  if (threadIdx.x == 2) out[3] = 1;
}
// Thread 1 fills a local array larger than its 64 KiB stack, from the top
// down, so it reaches the guard page below the stack.
__global__ void overflow_stack(int* out) {
  if (threadIdx.x != 1) return;
  volatile char big[128 * 1024];
  for (int i = int(sizeof big) - 1; i >= 0; --i) big[i] = char(i);
  out[0] = big[7];
}
}  // namespace

// Run only through run_child: the plain copy checks no access, so these fault.
TEST_CASE("null child: a write through a null pointer" * doctest::skip()) {
  warpnet::simt::launch(write_null, dim3(1), dim3(4), 0, static_cast<int*>(nullptr));
  FAIL("the launch returned");
}
TEST_CASE("overflow child: a local array past the thread's stack" * doctest::skip()) {
  DeviceBuffer<int> out(1);
  warpnet::simt::launch(overflow_stack, dim3(1), dim3(4), 0, out.get());
  FAIL("the launch returned");
}

TEST_CASE("a memory fault in a kernel ends the process naming the thread and the cause, not a bare SIGSEGV") {
  check_child_ends("null child*", 128 + SIGSEGV,
                   {"kernel write_null, block (0,0,0), thread (2,0,0): a memory fault (SIGSEGV) at address 12: "
                    "a null pointer at "});
  check_child_ends("overflow child*", 128 + SIGSEGV,
                   {"kernel overflow_stack, block (0,0,0), thread (1,0,0): its stack overflowed (each emulated thread "
                    "has 64 KiB) at ",
                    "a large local array?"});
}

// A kernel's assert() must fire in this file whatever the build type, so
// <cassert> is read again here without NDEBUG (it may be, by design).
#undef NDEBUG
#include <cassert>

namespace {
__global__ void assert_positive(const int* values) { assert(values[threadIdx.x] > 0); }
}  // namespace

// Run only through run_child: thread 2's value fails the assert.
TEST_CASE("assert child: a failed assert() in a kernel" * doctest::skip()) {
  DeviceBuffer<int> values(std::vector<int>{3, 1, -4, 1});
  warpnet::simt::launch(assert_positive, dim3(1), dim3(4), 0, values.get());
  FAIL("the launch returned");
}

TEST_CASE("a failed assert() in a kernel ends the process naming the thread, not a bare abort") {
  check_child_ends("assert child*", 128 + SIGABRT,
                   {"Assertion `values[threadIdx.x] > 0' failed",
                    "kernel assert_positive, block (0,0,0), thread (2,0,0): abort() was called (SIGABRT",
                    "cudaErrorAssert"});
}

TEST_CASE("a spin-wait ends the process after WARPNET_SIMT_HANG_TIMEOUT, naming the kernel, instead of hanging") {
  // The spinning thread, named: thread 0 waits for thread 32, which never runs.
  check_child_ends("spin-wait child*", 124,
                   {"spin_on_flag: no thread has switched",
                    "(running: kernel spin_on_flag, block (0,0,0), thread (0,0,0))", "spin-wait"});
  // Threads that each run longer than nothing, but end one after another,
  // are not stuck (the line: a renamed case would run nothing and exit 0).
  check_child_ends("busy child*", 0, {"busy child: the launch returned"});
}

TEST_CASE("a spin-wait that sleeps (__nanosleep) lets the other warp set its flag, as on a GPU") {
  DeviceBuffer<int> out(std::vector<int>{0});
  REQUIRE_NOTHROW(warpnet::simt::launch(sleep_on_flag, dim3(1), dim3(64), 0, out.get()));
  // Warp 0 runs first: thread 0 finds the flag clear once, sleeps, and warp 1 sets it.
  CHECK(out.download()[0] == 1);
}

TEST_CASE("a sleep that never ends is a hang the watchdog reports, not progress") {
  check_child_ends("sleep child*", 124, {"sleep_for_ever: no thread has switched", "__nanosleep()"});
}
