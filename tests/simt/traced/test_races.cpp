// The race checker's harder cases: atomics against plain accesses, a write
// by one of several readers, a __syncwarp over part of a warp, and a
// cp.async refilling what other threads still read. Each
// kernel comes in a correct form, which must pass, and a racy one, which
// must be named. Compiled with warpnet_simt_traced.
#include <doctest/doctest.h>

#include <string>

#include "kernels/common/ptx.hpp"
#include "tests/simt/device_buffer.hpp"

using warpnet::simt::LaunchError;

namespace {

// The launch's race report, or "" when it ran clean.
template <class... P, class... A>
std::string race_in(void (*kernel)(P...), dim3 block, A... args) {
  DeterministicScope deterministic;
  try {
    warpnet::simt::launch(kernel, dim3(1), block, 0, args...);
  } catch (const LaunchError& e) {
    CHECK(e.code() == cudaErrorLaunchFailure);
    return e.what();
  }
  return "";
}

// Thread 0 zeroes a counter every thread then adds to: without the barrier,
// another thread's atomic may come before the zero.
template <bool kBarrier>
__global__ void count_threads(int* out) {
  __shared__ int count;
  if (threadIdx.x == 0) count = 0;
  if (kBarrier) __syncthreads();
  atomicAdd(&count, 1);
  __syncthreads();
  if (threadIdx.x == 0) out[0] = count;
}

// Each thread adds, then reads the counter: with the barrier it reads the
// total, without it a plain read meets the other threads' atomics.
template <bool kBarrier>
__global__ void read_the_count(int* out) {
  __shared__ int count;
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  atomicAdd(&count, 1);
  if (kBarrier) __syncthreads();
  out[threadIdx.x] = count;
}

// Thread 0 adds and then reads the counter; the others only read it, with
// thread 0's atomic unordered with their reads.
__global__ void atomic_then_reads(int* out) {
  __shared__ int count;
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(&count, 1);
  out[threadIdx.x] = count;
}

// Thread 0 reads the counter, then every thread adds to it: the others'
// atomics are unordered with thread 0's read.
__global__ void read_then_atomics(int* out) {
  __shared__ int count;
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  if (threadIdx.x == 0) out[0] = count;
  atomicAdd(&count, 1);
}

// Ordering through a third lane: lane 2 writes, syncs with lane 1, which
// then syncs with lane 0, which reads: ordered on a GPU, not a race.
__global__ void sync_chain(float* out) {
  __shared__ float s[1];
  const unsigned lane = threadIdx.x;
  if (lane == 2) s[0] = 5.0f;
  if (lane == 1 || lane == 2) __syncwarp(0x6u);
  if (lane == 0 || lane == 1) __syncwarp(0x3u);
  if (lane == 0) out[0] = s[0];
}

// Every lane reads s[0]; a shuffle makes the lanes meet but orders no
// memory; then lane 0, itself one of the readers, overwrites s[0] while the
// others' reads are unordered with it (with __syncwarp they are ordered).
template <bool kSyncWarp>
__global__ void overwrite_after_broadcast(float* out) {
  __shared__ float s[1];
  if (threadIdx.x == 0) s[0] = 1.0f;
  __syncthreads();
  const float v = s[0];
  const float w = __shfl_xor_sync(0xffffffffu, v, 1);
  if (kSyncWarp) __syncwarp();
  if (threadIdx.x == 0) s[0] = 2.0f;
  out[threadIdx.x] = w;
}

// Four lanes swap neighbours through shared memory. With the whole warp's
// __syncwarp between store and load they are ordered. Otherwise lanes 0 and
// 1 pass __syncwarp(0x3) twice while lanes 2 and 3 meet at a shuffle (which
// orders no memory): syncs of other lanes come between lane 2's store and
// lane 3's load, and must not order them.
template <bool kWholeWarp>
__global__ void swap_pairs(float* out) {
  __shared__ float s[4];
  const unsigned lane = threadIdx.x;
  s[lane] = float(lane);
  float met = 0.0f;
  if (kWholeWarp) {
    __syncwarp(0xfu);
  } else if (lane < 2) {
    __syncwarp(0x3u);
    __syncwarp(0x3u);
  } else {
    met = __shfl_xor_sync(0xcu, 1.0f, 1);
  }
  out[lane] = s[lane ^ 1u] + met;
}

// A thread reads its cp.async's destination before the wait: the copy need
// not have landed, and nothing else wrote the tile.
__global__ void read_before_wait(const float* in, float* out) {
  __shared__ float tile[32];
  const unsigned t = threadIdx.x;
  warpnet::ptx::cp_async_ca<4>(&tile[t], &in[t]);
  warpnet::ptx::cp_async_commit();
  const float early = tile[t];
  warpnet::ptx::cp_async_wait<0>();
  __syncthreads();
  out[t] = early;
}

// A pipeline's refill: each thread reads another warp's element of the
// tile, then cp.async's the next value into its own. The copy may land any
// time from its issue on, so the reads must be ordered before the issue (a
// barrier first); the barrier before the wait does not help.
template <bool kBarrierFirst>
__global__ void refill_stage(const float* in, float* out) {
  __shared__ float tile[64];
  const unsigned t = threadIdx.x;
  tile[t] = in[t];
  __syncthreads();
  const float v = tile[(t + 32) % 64];
  if (kBarrierFirst) __syncthreads();
  warpnet::ptx::cp_async_ca<4>(&tile[t], &in[64 + t]);
  warpnet::ptx::cp_async_commit();
  __syncthreads();
  warpnet::ptx::cp_async_wait<0>();
  __syncthreads();
  out[t] = v + tile[t];
}

}  // namespace

TEST_CASE("traced: a plain write and another thread's atomic with no barrier between race") {
  DeviceBuffer<int> out(64);
  CHECK(race_in(count_threads<true>, dim3(64), out.get()).empty());
  CHECK(out.download()[0] == 64);
  const std::string message = race_in(count_threads<false>, dim3(64), out.get());
  INFO(message);
  CHECK(message.starts_with("kernel count_threads<false>, block (0,0,0), thread (1,0,0): shared-memory race on "
                            "`count`[byte 0]"));
  CHECK(message.find("this thread updates it with an atomic at ") != std::string::npos);
  CHECK(message.find("test_races.cpp:37 (") != std::string::npos);
  CHECK(message.find("and thread (0,0,0) wrote it at ") != std::string::npos);
  CHECK(message.find("test_races.cpp:35 (") != std::string::npos);  // the line of `count = 0`
}

TEST_CASE("traced: a plain read of a word other threads update atomically is a race") {
  DeviceBuffer<int> out(64);
  CHECK(race_in(read_the_count<true>, dim3(64), out.get()).empty());
  for (int v : out.download()) CHECK(v == 64);
  const std::string message = race_in(read_the_count<false>, dim3(64), out.get());
  INFO(message);
  CHECK(message.find("shared-memory race on `count`[byte 0]") != std::string::npos);
  CHECK(message.find("this thread updates it with an atomic at ") != std::string::npos);
  CHECK(message.find("test_races.cpp:49 (") != std::string::npos);
  CHECK(message.find("and thread (0,0,0) read it at") != std::string::npos);
}

TEST_CASE("traced: a thread's atomic and its own read of the word do not hide each other") {
  DeviceBuffer<int> out(64);
  const std::string reads = race_in(atomic_then_reads, dim3(64), out.get());
  INFO(reads);
  CHECK(reads.find("this thread reads it at") != std::string::npos);
  CHECK(reads.find("and thread (0,0,0) updated it with an atomic at ") != std::string::npos);
  CHECK(reads.find("test_races.cpp:60 (") != std::string::npos);
  const std::string atomics = race_in(read_then_atomics, dim3(64), out.get());
  INFO(atomics);
  CHECK(atomics.find("this thread updates it with an atomic at ") != std::string::npos);
  CHECK(atomics.find("test_races.cpp:71 (") != std::string::npos);
  CHECK(atomics.find("and thread (0,0,0) read it at") != std::string::npos);
}

TEST_CASE("traced: __syncwarp orders lanes through a chain of partial masks") {
  DeviceBuffer<float> out(1);
  CHECK(race_in(sync_chain, dim3(3), out.get()).empty());
  CHECK(out.download()[0] == 5.0f);
}

TEST_CASE("traced: a write by one of many readers races with the others") {
  DeviceBuffer<float> out(32);
  CHECK(race_in(overwrite_after_broadcast<true>, dim3(32), out.get()).empty());
  const std::string message = race_in(overwrite_after_broadcast<false>, dim3(32), out.get());
  INFO(message);
  CHECK(message.starts_with("kernel overwrite_after_broadcast<false>, block (0,0,0), thread (0,0,0): "
                            "shared-memory race on `s`[byte 0]"));
  CHECK(message.find("this thread writes it at") != std::string::npos);
  CHECK(message.find("and thread (1,0,0) read it at") != std::string::npos);
}

TEST_CASE("traced: __syncwarp(mask) orders only the lanes in its mask") {
  DeviceBuffer<float> out(4);
  CHECK(race_in(swap_pairs<true>, dim3(4), out.get()).empty());
  CHECK(out.download()[2] == 3.0f);
  const std::string message = race_in(swap_pairs<false>, dim3(4), out.get());
  INFO(message);
  CHECK(message.find("shared-memory race on `s`[byte ") != std::string::npos);
  CHECK(message.find("thread (3,0,0)") != std::string::npos);
  CHECK(message.find("thread (2,0,0)") != std::string::npos);
}

TEST_CASE("traced: a cp.async into shared memory other threads still read races from its issue") {
  std::vector<float> values(128);
  for (int i = 0; i < 128; ++i) values[i] = float(i);
  DeviceBuffer<float> in(values), out(64);
  CHECK(race_in(refill_stage<true>, dim3(64), in.get(), out.get()).empty());
  CHECK(out.download()[0] == 32.0f + 64.0f);  // tile[32] as loaded, then in[64]
  const std::string message = race_in(refill_stage<false>, dim3(64), in.get(), out.get());
  INFO(message);
  CHECK(message.find("shared-memory race on `tile`[byte ") != std::string::npos);
  CHECK(message.find("this thread issues a cp.async into it") != std::string::npos);
  CHECK(message.find("with no __syncthreads() between them") != std::string::npos);
}

TEST_CASE("traced: reading a cp.async's destination before its wait is still an uninitialized read") {
  DeviceBuffer<float> in(std::vector<float>(32, 1.0f)), out(32);
  const std::string message = race_in(read_before_wait, dim3(32), in.get(), out.get());
  INFO(message);
  CHECK(message.find("reads `tile`[byte 0]") != std::string::npos);
  CHECK(message.find("(uninitialized shared memory)") != std::string::npos);
}
