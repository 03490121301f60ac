// The CUDA runtime API on the CPU: device memory is host memory registered as
// an allocation, copies are memcpy after CUDA's own pointer checks, launches
// are synchronous (so events time them and streams need no queue).
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>

#include "simt/allocations.hpp"
#include "simt/launch.hpp"
#include "simt/limits.hpp"

struct CUevent_st {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
};
struct CUstream_st {};

namespace warpnet::simt {
namespace {

struct ErrorState {
  cudaError_t last = cudaSuccess;     // cudaGetLastError
  cudaError_t pending = cudaSuccess;  // a fault while running, for cudaDeviceSynchronize
  std::string message;
};
thread_local ErrorState errors;

cudaError_t fail_with(cudaError_t code, const std::string& message) {
  record_error(code, message);
  return code;
}

std::mutex optin_mutex;
std::unordered_map<const void*, size_t> optins;

// Fresh device memory holds garbage on a GPU; all-ones bytes (a NaN as float,
// -1 as int) make a kernel that reads it before writing fail visibly.
constexpr unsigned char kPoison = 0xff;

}  // namespace

void record_error(cudaError_t code, const std::string& message) {
  errors.last = code;
  errors.message = message;
  if (code >= cudaErrorIllegalAddress) errors.pending = code;
}

const std::string& last_error_message() { return errors.message; }

size_t dynamic_shared_optin(const void* kernel) {
  std::lock_guard lock(optin_mutex);
  auto it = optins.find(kernel);
  return it == optins.end() ? 0 : it->second;
}

void set_dynamic_shared_optin(const void* kernel, size_t bytes) {
  std::lock_guard lock(optin_mutex);
  optins[kernel] = bytes;
}

}  // namespace warpnet::simt

using namespace warpnet;
using namespace warpnet::simt;

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchOutOfResources: return "cudaErrorLaunchOutOfResources";
    case cudaErrorLaunchTimeout: return "cudaErrorLaunchTimeout";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
  }
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorLaunchTimeout: return "the launch timed out and was terminated";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
  }
  return "unknown error";
}

cudaError_t cudaGetLastError() { return std::exchange(errors.last, cudaSuccess); }
cudaError_t cudaPeekAtLastError() { return errors.last; }

// On a GPU a fault poisons the context until cudaDeviceReset; the emulator
// reports it once, so one failing test does not fail the next.
cudaError_t cudaDeviceSynchronize() { return std::exchange(errors.pending, cudaSuccess); }
cudaError_t cudaDeviceReset() {
  errors = {};
  return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  return device == 0 ? cudaSuccess : fail_with(cudaErrorInvalidValue, cat("cudaSetDevice(", device,
                                                                           "): the emulator has device 0 only"));
}
cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (device != 0) return fail_with(cudaErrorInvalidValue, "cudaGetDeviceProperties: the emulator has device 0 only");
  *prop = {};
  std::strncpy(prop->name, "warpnet SIMT emulator", sizeof prop->name - 1);
  prop->totalGlobalMem = size_t(16) << 30;
  prop->sharedMemPerBlock = kSharedPerBlock;
  prop->sharedMemPerBlockOptin = kSharedPerBlockOptin;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = int(kMaxThreadsPerBlock);
  for (int d = 0; d < 3; ++d) {
    prop->maxThreadsDim[d] = int(kMaxBlockDim[d]);
    prop->maxGridSize[d] = int(kMaxGridDim[d]);
  }
  prop->multiProcessorCount = warpnet::simt::workers();
  prop->major = 9;
  prop->minor = 0;
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** ptr, size_t bytes) {
  // CUDA aligns allocations to 256 bytes; kernels' vector loads rely on it.
  void* p = ::operator new(std::max<size_t>(bytes, 1), std::align_val_t(256), std::nothrow);
  if (!p) return fail_with(cudaErrorMemoryAllocation, cat("cudaMalloc: cannot allocate ", bytes, " bytes"));
  std::memset(p, kPoison, bytes);
  register_allocation(p, bytes);
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  if (!ptr) return cudaSuccess;
  if (!unregister_allocation(ptr))
    return fail_with(cudaErrorInvalidValue, cat("cudaFree(", ptr, "): not the start of a cudaMalloc allocation"));
  ::operator delete(ptr, std::align_val_t(256));
  return cudaSuccess;
}

// Pinned host memory is mapped into the device's address space under UVA,
// so kernels may read it: it is registered like device memory.
cudaError_t cudaMallocHost(void** ptr, size_t bytes) { return cudaMalloc(ptr, bytes); }
cudaError_t cudaFreeHost(void* ptr) { return cudaFree(ptr); }

namespace {

cudaError_t check_device_range(const char* call, const char* side, const void* p, size_t bytes) {
  if (bytes == 0 || find_allocation(p, bytes)) return cudaSuccess;
  return fail_with(cudaErrorInvalidValue,
                   cat(call, ": the ", side, " range [", p, ", +", bytes, ") is not inside a device allocation: ",
                       describe_near(allocation_snapshot(), reinterpret_cast<uintptr_t>(p), bytes)));
}

}  // namespace

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return fail_with(cudaErrorInvalidMemcpyDirection, cat("cudaMemcpy: ", int(kind), " is not a cudaMemcpyKind"));
  const bool device_dst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool device_src = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (device_dst)
    if (cudaError_t e = check_device_range("cudaMemcpy", "destination", dst, bytes)) return e;
  if (device_src)
    if (cudaError_t e = check_device_range("cudaMemcpy", "source", src, bytes)) return e;
  if (bytes) std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy(dst, src, bytes, kind);
}

cudaError_t cudaMemset(void* ptr, int value, size_t bytes) {
  if (cudaError_t e = check_device_range("cudaMemset", "destination", ptr, bytes)) return e;
  if (bytes) std::memset(ptr, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t bytes, cudaStream_t) { return cudaMemset(ptr, value, bytes); }

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  *event = new CUevent_st;
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  if (!event) return fail_with(cudaErrorInvalidResourceHandle, "cudaEventRecord: null event");
  event->time = std::chrono::steady_clock::now();
  event->recorded = true;
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return event ? cudaSuccess : fail_with(cudaErrorInvalidResourceHandle, "cudaEventSynchronize: null event");
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (!start || !end || !start->recorded || !end->recorded)
    return fail_with(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime: both events must have been recorded");
  *ms = std::chrono::duration<float, std::milli>(end->time - start->time).count();
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  *stream = new CUstream_st;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  delete stream;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

cudaError_t cudaFuncSetAttribute(const void* kernel, cudaFuncAttribute attr, int value) {
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize)
    return fail_with(cudaErrorInvalidValue, cat("cudaFuncSetAttribute: attribute ", int(attr), " is not emulated"));
  if (value < 0 || size_t(value) > kSharedPerBlockOptin) {
    return fail_with(cudaErrorInvalidValue, cat("cudaFuncSetAttribute: ", value,
                                                " bytes of dynamic shared memory; the limit is ", kSharedPerBlockOptin));
  }
  set_dynamic_shared_optin(kernel, size_t(value));
  return cudaSuccess;
}
