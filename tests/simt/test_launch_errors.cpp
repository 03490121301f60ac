// Launch configuration checks return the CUDA error a GPU would, and the
// runtime API follows CUDA's error model (cudaGetLastError, sticky-until-sync).
#include <doctest/doctest.h>

#include <cmath>
#include <exception>
#include <string>
#include <thread>

#include "kernels/common/float4_rows.hpp"
#include "tests/simt/device_buffer.hpp"

using warpnet::simt::LaunchError;

namespace {

__global__ void noop(int*) {}

__global__ void big_static_shared(float* out) {
  __shared__ float tile[16 * 1024];  // 64 KiB: over the 48 KiB static limit
  tile[threadIdx.x] = 1.0f;
  out[threadIdx.x] = tile[threadIdx.x];
}

__global__ void static_40_kib(float* out) {
  __shared__ float tile[10 * 1024];  // 40 KiB: under the static limit, but it counts against the opt-in one
  tile[threadIdx.x] = 1.0f;
  out[threadIdx.x] = tile[threadIdx.x];
}

__global__ void write_ones(float* out) { out[threadIdx.x] = 1.0f; }

// Each block reads its shared memory before writing it (a bug: what it finds
// is undefined), then writes it, so the next block would find these values.
__global__ void read_shared_before_writing(float* out) {
  __shared__ float tile[32];
  float* dynamic = warpnet::dynamic_shared<float>();
  const unsigned i = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
  out[i] = tile[threadIdx.x];
  out[i + 1] = dynamic[threadIdx.x];
  tile[threadIdx.x] = dynamic[threadIdx.x] = 1.0f;
}

// Each thread copies 4 floats from x + offset to y + offset as one float4.
__global__ void copy_float4_at(const float* x, float* y, int offset) {
  const int i = offset + 4 * int(threadIdx.x);
  warpnet::store_float4(y + i, warpnet::load_float4(x + i));
}

// Thread 5 throws, as no kernel can on a GPU. (An exception that allocates
// nothing: in the traced copy a std::runtime_error's string, allocated by
// kernel code, is already an out-of-bounds write.)
struct LearnerError : std::exception {
  const char* what() const noexcept override { return "learner threw"; }
};
__global__ void throw_in_thread_5(int* out) {
  if (threadIdx.x == 5) throw LearnerError();
  out[threadIdx.x] = 1;
}

// An atomic on an int that starts `offset` bytes into the buffer.
__global__ void atomic_add_at(int* base, int offset) {
  atomicAdd(reinterpret_cast<int*>(reinterpret_cast<char*>(base) + offset), 1);
}

// The error code and message of a launch of `noop` with this shape.
std::pair<cudaError_t, std::string> launch_noop(dim3 grid, dim3 block, size_t shared = 0) {
  try {
    warpnet::simt::launch(noop, grid, block, shared, nullptr);
  } catch (const LaunchError& e) {
    return {e.code(), e.what()};
  }
  return {cudaSuccess, ""};
}

}  // namespace

TEST_CASE("invalid launch configurations are cudaErrorInvalidConfiguration") {
  auto [code, message] = launch_noop(dim3(1), dim3(1025));
  CHECK(code == cudaErrorInvalidConfiguration);
  CHECK(message == "kernel noop launched with grid (1,1,1), block (1025,1,1): block dimension x is 1025, the limit is "
                   "1024 (cudaErrorInvalidConfiguration)");
  CHECK(launch_noop(dim3(1), dim3(32, 32, 2)).first == cudaErrorInvalidConfiguration);  // 2048 threads
  CHECK(launch_noop(dim3(1), dim3(1, 1, 65)).first == cudaErrorInvalidConfiguration);   // z > 64
  CHECK(launch_noop(dim3(0), dim3(32)).first == cudaErrorInvalidConfiguration);
  CHECK(launch_noop(dim3(1, 65536), dim3(32)).first == cudaErrorInvalidConfiguration);
  CHECK(launch_noop(dim3(1), dim3(1, 1, 0)).first == cudaErrorInvalidConfiguration);
  CHECK(launch_noop(dim3(1), dim3(1024)).first == cudaSuccess);
  CHECK(launch_noop(dim3(1), dim3(1, 1, 64)).first == cudaSuccess);
}

TEST_CASE("shared memory over the limit is cudaErrorInvalidValue until opted in") {
  auto [code, message] = launch_noop(dim3(1), dim3(32), 64 * 1024);
  CHECK(code == cudaErrorInvalidValue);
  CHECK(message.find("65536 bytes of dynamic shared memory") != std::string::npos);
  CHECK(cudaFuncSetAttribute(noop, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024) == cudaSuccess);
  CHECK(launch_noop(dim3(1), dim3(32), 64 * 1024).first == cudaSuccess);
  CHECK(cudaFuncSetAttribute(noop, cudaFuncAttributeMaxDynamicSharedMemorySize, 300 * 1024) == cudaErrorInvalidValue);
  cudaGetLastError();

  DeviceBuffer<float> out(32);
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(big_static_shared, dim3(1), dim3(32), 0, out.get()),
                       doctest::Contains("declares 65536 bytes of static __shared__ memory"), LaunchError);

  // Static and dynamic together: 227 KiB per block, so 40 KiB static leaves 187 KiB to opt in to.
  const int room = (227 - 40) * 1024;
  CHECK(cudaFuncSetAttribute(static_40_kib, cudaFuncAttributeMaxDynamicSharedMemorySize, room + 4) ==
        cudaErrorInvalidValue);
  CHECK(std::string(warpnet::cuda_error_detail(cudaErrorInvalidValue))
            .find("with the kernel's 40960 static bytes the limit is 191488") != std::string::npos);
  cudaGetLastError();
  CHECK(cudaFuncSetAttribute(static_40_kib, cudaFuncAttributeMaxDynamicSharedMemorySize, room) == cudaSuccess);
  warpnet::simt::launch(static_40_kib, dim3(1), dim3(32), size_t(room), out.get());
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(static_40_kib, dim3(1), dim3(32), size_t(room) + 4, out.get()),
                       doctest::Contains("the limit is 191488 (232448 per block, static and dynamic together)"),
                       LaunchError);
}

TEST_CASE("launch_kernel_opted_in raises the shared-memory limit, or launches nothing and leaves the reason") {
  CHECK(cudaGetLastError() == cudaSuccess);
  DeviceBuffer<float> out(32);
  warpnet::launch_kernel_opted_in(write_ones, dim3(1), dim3(32), 100 * 1024, out.get());
  REQUIRE(cudaGetLastError() == cudaSuccess);
  CHECK(out.download()[31] == 1.0f);

  // 40 KiB static + 200 KiB dynamic is over the 227 KiB per block: the opt-in is refused.
  DeviceBuffer<float> untouched(32);
  warpnet::launch_kernel_opted_in(static_40_kib, dim3(1), dim3(32), 200 * 1024, untouched.get());
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidValue);
  CHECK(std::string(warpnet::cuda_error_detail(cudaErrorInvalidValue))
            .find("cudaFuncSetAttribute: 204800 bytes of dynamic shared memory") != std::string::npos);
  cudaGetLastError();
  CHECK(std::isnan(untouched.download()[0]));  // fresh memory is NaN: the kernel never ran
}

TEST_CASE("CUDA-style launches leave their error for cudaGetLastError") {
  CHECK(cudaGetLastError() == cudaSuccess);
  warpnet::launch_kernel(noop, dim3(1), dim3(2048), 0, nullptr);
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidConfiguration);
  CHECK(std::string(warpnet::cuda_error_detail(cudaErrorInvalidConfiguration)).find("2048") != std::string::npos);
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  CHECK(cudaGetLastError() == cudaSuccess);  // reading it resets it
  CHECK(cudaDeviceSynchronize() == cudaSuccess);  // configuration errors are not faults
  CHECK(std::string(cudaGetErrorString(cudaErrorInvalidConfiguration)) == "invalid configuration argument");
}

// A fault is the context's, not one host thread's: a worker thread's
// launch fails, and the main thread's next synchronization returns it (once);
// the last error stays the worker's own.
TEST_CASE("a fault in one host thread's launch is returned by another thread's synchronization") {
  DeviceBuffer<int> out(32);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::thread worker([&] { warpnet::launch_kernel(throw_in_thread_5, dim3(1), dim3(32), 0, out.get()); });
  worker.join();
  CHECK(cudaPeekAtLastError() == cudaSuccess);  // per thread, as in CUDA
  CHECK(cudaStreamSynchronize(nullptr) == cudaErrorLaunchFailure);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);  // reported once
}

TEST_CASE("cudaMemcpy and cudaMemset check the device side of the copy") {
  DeviceBuffer<float> buffer(100);
  std::vector<float> host(101);
  CHECK(cudaMemcpy(buffer.get(), host.data(), 100 * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
  CHECK(cudaMemcpy(buffer.get(), host.data(), 101 * sizeof(float), cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(warpnet::simt::last_error_message().find("not inside a device allocation") != std::string::npos);
  CHECK(cudaMemcpy(host.data(), host.data() + 1, 4, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
  CHECK(cudaMemset(buffer.get() + 50, 0, 51 * sizeof(float)) == cudaErrorInvalidValue);
  CHECK(cudaFree(host.data()) == cudaErrorInvalidValue);
  CHECK(warpnet::simt::last_error_message().ends_with("not the start of a cudaMalloc allocation"));
  float* once = nullptr;
  REQUIRE(cudaMalloc(&once, 64) == cudaSuccess);
  CHECK(cudaFree(once) == cudaSuccess);
  CHECK(cudaFree(once) == cudaErrorInvalidValue);
  CHECK(warpnet::simt::last_error_message().ends_with("already freed (a second cudaFree of one allocation)"));
  cudaGetLastError();
}

TEST_CASE("a size that wraps, cudaMemcpyDefault and null pointers are refused, not copied through") {
  DeviceBuffer<float> buffer(64);
  std::vector<float> host(64);
  using warpnet::simt::last_error_message;
  // A negative count cast to size_t: address + size wrapped past the check.
  CHECK(cudaMemcpy(buffer.get(), host.data(), size_t(-1) * 4, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(cudaMemset(buffer.get(), 0, size_t(-8)) == cudaErrorInvalidValue);
  // cudaMemcpyDefault: the pointers say which side is device memory, and that side is checked.
  CHECK(cudaMemcpy(buffer.get(), host.data(), 64 * sizeof(float), cudaMemcpyDefault) == cudaSuccess);
  CHECK(cudaMemcpy(buffer.get(), host.data(), 65 * sizeof(float), cudaMemcpyDefault) == cudaErrorInvalidValue);
  CHECK(last_error_message().find("the destination range") != std::string::npos);
  CHECK(cudaMemcpy(host.data(), buffer.get() + 1, 64 * sizeof(float), cudaMemcpyDefault) == cudaErrorInvalidValue);
  CHECK(last_error_message().find("the source range") != std::string::npos);
  // A null host side, and null output pointers.
  CHECK(cudaMemcpy(buffer.get(), nullptr, 16, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(last_error_message().find("the source is a null pointer") != std::string::npos);
  CHECK(cudaMemcpy(nullptr, buffer.get(), 16, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
  CHECK(cudaMalloc(nullptr, 64) == cudaErrorInvalidValue);
  CHECK(cudaMallocHost(nullptr, 64) == cudaErrorInvalidValue);
  CHECK(cudaGetDeviceCount(nullptr) == cudaErrorInvalidValue);
  CHECK(cudaGetDevice(nullptr) == cudaErrorInvalidValue);
  CHECK(cudaGetDeviceProperties(nullptr, 0) == cudaErrorInvalidValue);
  CHECK(cudaEventCreate(nullptr) == cudaErrorInvalidValue);
  // Device 1 does not exist: CUDA's own code for that.
  CHECK(cudaSetDevice(1) == cudaErrorInvalidDevice);
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 1) == cudaErrorInvalidDevice);
  CHECK(std::string(cudaGetErrorName(cudaErrorInvalidDevice)) == "cudaErrorInvalidDevice");
  CHECK(std::string(cudaGetErrorName(cudaError_t(12345))) == "unrecognized error code");
  // Each free takes only what its own allocation call made.
  float* pinned = nullptr;
  REQUIRE(cudaMallocHost(reinterpret_cast<void**>(&pinned), 64) == cudaSuccess);
  CHECK(cudaFree(pinned) == cudaErrorInvalidValue);
  CHECK(last_error_message().find("came from cudaMallocHost; free it with cudaFreeHost") != std::string::npos);
  CHECK(cudaFreeHost(buffer.get()) == cudaErrorInvalidValue);
  CHECK(last_error_message().find("came from cudaMalloc; free it with cudaFree") != std::string::npos);
  CHECK(cudaFreeHost(pinned) == cudaSuccess);
  // A null kernel pointer.
  CHECK(cudaFuncSetAttribute(nullptr, cudaFuncAttributeMaxDynamicSharedMemorySize, 0) ==
        cudaErrorInvalidDeviceFunction);
  void (*no_kernel)(int*) = nullptr;
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(no_kernel, dim3(1), dim3(1), 0, static_cast<int*>(nullptr)),
                       doctest::Contains("a null kernel pointer"), LaunchError);
  cudaGetLastError();
}

TEST_CASE("a destroyed stream, event, graph or exec is cudaErrorInvalidResourceHandle, not read") {
  using warpnet::simt::last_error_message;
  cudaEvent_t event = nullptr;
  REQUIRE(cudaEventCreate(&event) == cudaSuccess);
  CHECK(cudaEventDestroy(event) == cudaSuccess);
  CHECK(cudaEventDestroy(event) == cudaErrorInvalidResourceHandle);
  CHECK(last_error_message().find("was destroyed, or never created by cudaEventCreate") != std::string::npos);
  CHECK(cudaEventRecord(event, nullptr) == cudaErrorInvalidResourceHandle);
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, event, event) == cudaErrorInvalidResourceHandle);

  DeviceBuffer<float> out(1);
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
  warpnet::simt::launch_on(stream, write_ones, dim3(1), dim3(1), 0, out.get());
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  CHECK(cudaStreamDestroy(stream) == cudaSuccess);
  CHECK(cudaStreamDestroy(stream) == cudaErrorInvalidResourceHandle);
  CHECK(cudaStreamSynchronize(stream) == cudaErrorInvalidResourceHandle);
  CHECK_THROWS_WITH_AS(warpnet::simt::launch_on(stream, write_ones, dim3(1), dim3(1), 0, out.get()),
                       doctest::Contains("was destroyed, or never created by cudaStreamCreate"), LaunchError);
  CHECK(cudaGraphExecDestroy(exec) == cudaSuccess);
  CHECK(cudaGraphLaunch(exec, nullptr) == cudaErrorInvalidResourceHandle);
  CHECK(cudaGraphExecDestroy(exec) == cudaErrorInvalidResourceHandle);
  CHECK(cudaGraphDestroy(graph) == cudaSuccess);
  CHECK(cudaGraphDestroy(graph) == cudaErrorInvalidResourceHandle);
  CHECK(cudaGraphInstantiate(&exec, graph, 0) == cudaErrorInvalidResourceHandle);
  cudaGetLastError();
}

TEST_CASE("shared memory, static and dynamic, is poisoned at each block's start") {
  // One worker runs the blocks one after another on the same shared memory:
  // neither the zeros of a fresh mapping nor the last block's ones.
  DeterministicScope deterministic;
  DeviceBuffer<float> out(3 * 32 * 2);
  warpnet::simt::launch(read_shared_before_writing, dim3(3), dim3(32), 32 * sizeof(float), out.get());
  for (float v : out.download()) REQUIRE(std::isnan(v));
}

TEST_CASE("fresh device memory is poisoned, and events time a launch") {
  DeviceBuffer<float> buffer(4);
  CHECK(std::isnan(buffer.download()[0]));  // a kernel reading it before writing sees NaN
  cudaEvent_t start, stop;
  REQUIRE(cudaEventCreate(&start) == cudaSuccess);
  REQUIRE(cudaEventCreate(&stop) == cudaSuccess);
  cudaEventRecord(start);
  warpnet::launch_kernel(noop, dim3(4), dim3(256), 0, nullptr);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = -1.0f;
  CHECK(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess);
  CHECK(ms >= 0.0f);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
  CHECK(prop.maxThreadsPerBlock == 1024);
  CHECK(prop.warpSize == 32);
}

// A GPU faults on a vector access not aligned to its size (the emulator's
// float4 is a memcpy, which would take any address): elementwise/02 and the
// GEMMs' vector paths must fall back to scalars for a pointer one float
// into a buffer, and the emulator now tells when one does not.
TEST_CASE("a float4 access at an address not 16-byte aligned is cudaErrorMisalignedAddress") {
  DeviceBuffer<float> x(68), y(68);
  CHECK_NOTHROW(warpnet::simt::launch(copy_float4_at, dim3(1), dim3(16), 0, x.get(), y.get(), 0));
  try {
    warpnet::simt::launch(copy_float4_at, dim3(1), dim3(16), 0, x.get(), y.get(), 1);
    FAIL("a load_float4 at x + 1 ran");
  } catch (const LaunchError& e) {
    CHECK(e.code() == cudaErrorMisalignedAddress);
    CHECK(std::string(e.what()).find("load_float4 (ld.v4)") != std::string::npos);
    CHECK(std::string(e.what()).find("a 16-byte access at") != std::string::npos);
  }
}

TEST_CASE("a kernel that throws fails its launch naming the thread, instead of ending the process") {
  DeviceBuffer<int> out(32);
  try {
    warpnet::simt::launch(throw_in_thread_5, dim3(1), dim3(32), 0, out.get());
    FAIL("the launch returned");
  } catch (const LaunchError& e) {
    CHECK(e.code() == cudaErrorLaunchFailure);
    CHECK(std::string(e.what()) == "kernel throw_in_thread_5, block (0,0,0), thread (5,0,0): the kernel threw "
                                   "(anonymous namespace)::LearnerError: learner threw (device code cannot throw on a GPU)");
  }
}

TEST_CASE("an atomic at an address not aligned to its size is cudaErrorMisalignedAddress, not a torn update") {
  DeviceBuffer<int> word(std::vector<int>{0, 0});
  CHECK_NOTHROW(warpnet::simt::launch(atomic_add_at, dim3(1), dim3(32), 0, word.get(), 4));
  CHECK(word.download() == std::vector<int>{0, 32});
  try {
    warpnet::simt::launch(atomic_add_at, dim3(1), dim3(32), 0, word.get(), 2);
    FAIL("an atomicAdd at a 2-byte offset ran");
  } catch (const LaunchError& e) {
    CHECK(e.code() == cudaErrorMisalignedAddress);
    CHECK(std::string(e.what()).find("thread (0,0,0): an atomic at ") != std::string::npos);
    CHECK(std::string(e.what()).find("a 4-byte access at") != std::string::npos);
  }
  CHECK(word.download() == std::vector<int>{0, 32});
}
