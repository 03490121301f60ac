// The CUDA runtime API on the CPU: device memory is host memory registered as
// an allocation, copies are memcpy after CUDA's own pointer checks, launches
// are synchronous (so events time them and streams need no queue). Streams,
// capture and graphs are capture.cpp's and graphs.cpp's; calls that a capture
// restricts ask capture.hpp's checks first.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>

#include "core/host_memory.hpp"
#include "core/memory.hpp"
#include "simt/allocations.hpp"
#include "simt/capture.hpp"
#include "simt/handles.hpp"
#include "simt/launch.hpp"
#include "simt/limits.hpp"
#include "simt/stepper.hpp"
#include "simt/symbols.hpp"

struct CUevent_st {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
  bool captured = false;  // last recorded on a capturing stream: it has no time
};

namespace warpnet::simt {
namespace {

// The last error is each host thread's own, as in CUDA; a fault while
// running is the process's (the context's), for the next synchronization on
// any thread: a worker thread's launch, a main thread's cudaDeviceSynchronize.
struct ErrorState {
  cudaError_t last = cudaSuccess;  // cudaGetLastError
  std::string message;
};
thread_local ErrorState errors;
std::atomic<cudaError_t> pending_fault{cudaSuccess};

std::mutex optin_mutex;
std::unordered_map<const void*, size_t> optins;

// Fresh device memory holds garbage on a GPU; all-ones bytes (a NaN as float,
// -1 as int) make a kernel that reads it before writing fail visibly.
constexpr unsigned char kPoison = 0xff;

}  // namespace

cudaError_t fail_with(cudaError_t code, const std::string& message) {
  record_error(code, message);
  return code;
}

void record_error(cudaError_t code, const std::string& message) {
  errors.last = code;
  errors.message = message;
  // Faults while running (7xx) stay for the next synchronization, on any
  // thread; a refused call (capture rules, 9xx) does not.
  if (code >= cudaErrorIllegalAddress && code < 800) pending_fault = code;
}

cudaError_t take_pending_fault() { return pending_fault.exchange(cudaSuccess); }

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
    case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorIllegalState: return "cudaErrorIllegalState";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchOutOfResources: return "cudaErrorLaunchOutOfResources";
    case cudaErrorLaunchTimeout: return "cudaErrorLaunchTimeout";
    case cudaErrorMisalignedAddress: return "cudaErrorMisalignedAddress";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    case cudaErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated: return "cudaErrorStreamCaptureInvalidated";
    case cudaErrorStreamCaptureUnmatched: return "cudaErrorStreamCaptureUnmatched";
    case cudaErrorStreamCaptureImplicit: return "cudaErrorStreamCaptureImplicit";
    case cudaErrorCapturedEvent: return "cudaErrorCapturedEvent";
    case cudaErrorStreamCaptureWrongThread: return "cudaErrorStreamCaptureWrongThread";
    case cudaErrorInvalidClusterSize: return "cudaErrorInvalidClusterSize";
  }
  return "unrecognized error code";  // (CUDA's answer for a value that is no cudaError_t)
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorIllegalState: return "the operation cannot be performed in the present state";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorLaunchTimeout: return "the launch timed out and was terminated";
    case cudaErrorMisalignedAddress: return "misaligned address";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    case cudaErrorStreamCaptureUnmatched: return "capture was not ended in the same stream as it began";
    case cudaErrorStreamCaptureImplicit: return "operation would make the legacy stream depend on a capturing blocking stream";
    case cudaErrorCapturedEvent: return "operation not permitted on an event last recorded in a capturing stream";
    case cudaErrorStreamCaptureWrongThread: return "attempt to terminate a thread-local capture sequence from another thread";
    case cudaErrorInvalidClusterSize: return "invalid cluster size";
  }
  return "unrecognized error code";
}

cudaError_t cudaGetLastError() { return std::exchange(errors.last, cudaSuccess); }
cudaError_t cudaPeekAtLastError() { return errors.last; }

// On a GPU a fault poisons the context until cudaDeviceReset; the emulator
// reports it once, so one failing test does not fail the next.
cudaError_t cudaDeviceSynchronize() {
  if (cudaError_t e = check_device_wait("cudaDeviceSynchronize")) return e;
  return take_pending_fault();
}
cudaError_t cudaDeviceReset() {
  errors = {};
  pending_fault = cudaSuccess;
  return cudaSuccess;
}

namespace {

// An output pointer the caller passed null: CUDA answers cudaErrorInvalidValue.
cudaError_t null_output(const char* call, const char* what) {
  return fail_with(cudaErrorInvalidValue, cat(call, ": null pointer for ", what));
}

}  // namespace

cudaError_t cudaGetDeviceCount(int* count) {
  if (!count) return null_output("cudaGetDeviceCount", "the count");
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  return device == 0 ? cudaSuccess : fail_with(cudaErrorInvalidDevice, cat("cudaSetDevice(", device,
                                                                            "): the emulator has device 0 only"));
}
cudaError_t cudaGetDevice(int* device) {
  if (!device) return null_output("cudaGetDevice", "the device");
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (!prop) return null_output("cudaGetDeviceProperties", "the properties");
  if (device != 0)
    return fail_with(cudaErrorInvalidDevice,
                     cat("cudaGetDeviceProperties(", device, "): the emulator has device 0 only"));
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
  // The blocks that run at once: the workers, or one under a stepper (which
  // runs a launch's blocks one after another), so that a kernel whose blocks
  // wait for each other (matmul v16's stream-K) sizes its grid to what is
  // resident, as on a GPU.
  prop->multiProcessorCount = warpnet::simt::active_stepper() ? 1 : warpnet::simt::workers();
  prop->major = 9;
  prop->minor = 0;
  return cudaSuccess;
}

namespace warpnet::simt {

// Bytes after each allocation that belong to none: an overrun of up to this
// much lands there and the traced build reports it, where it could have
// landed in the next buffer the heap placed 16 bytes on.
constexpr size_t kRedZone = 1024;

cudaError_t allocate_device(void** ptr, size_t bytes, const char* call, AllocationKind kind) {
  if (!ptr) return fail_with(cudaErrorInvalidValue, cat(call, ": null pointer for the result"));
  // The emulator's device memory is host memory: refused here, not killed
  // by the kernel's OOM killer when the poisoning below touches it.
  if (bytes > size_t(INT64_MAX) - kRedZone)
    return fail_with(cudaErrorMemoryAllocation, cat(call, ": cannot allocate ", bytes, " bytes (more than 2^63)"));
  if (const std::string why = host_allocation_refusal(int64_t(bytes)); !why.empty())
    return fail_with(cudaErrorMemoryAllocation, cat(call, ": cannot allocate ", bytes, " bytes (",
                                                    format_bytes(int64_t(bytes)), "): ", why,
                                                    "; the emulator's device memory is host memory"));
  // CUDA aligns allocations to 256 bytes; kernels' vector loads rely on it.
  void* p = ::operator new(bytes + kRedZone, std::align_val_t(256), std::nothrow);
  if (!p) return fail_with(cudaErrorMemoryAllocation, cat(call, ": cannot allocate ", bytes, " bytes"));
  std::memset(p, kPoison, bytes);
  register_allocation(p, bytes, kind);
  *ptr = p;
  return cudaSuccess;
}

cudaError_t free_device(void* ptr, const char* call, AllocationKind kind) {
  if (!ptr) return cudaSuccess;
  if (const std::optional<AllocationKind> made = allocation_kind(ptr); made && *made != kind)
    return fail_with(cudaErrorInvalidValue,
                     cat(call, "(", ptr, "): the memory came from ",
                         *made == AllocationKind::pinned_host ? "cudaMallocHost; free it with cudaFreeHost"
                                                              : "cudaMalloc; free it with cudaFree"));
  if (owned_by_a_graph(ptr)) {
    return fail_with(cudaErrorInvalidValue, cat(call, "(", ptr, "): the memory was allocated by cudaMallocAsync during a "
                                                "capture and belongs to the graph; it is freed when the graph and "
                                                "every exec made from it are destroyed"));
  }
  if (!unregister_allocation(ptr))
    return fail_with(cudaErrorInvalidValue, cat(call, "(", ptr, "): ",
                                                was_freed(ptr) ? "already freed (a second cudaFree of one allocation)"
                                                               : "not the start of a cudaMalloc allocation"));
  ::operator delete(ptr, std::align_val_t(256));
  return cudaSuccess;
}

}  // namespace warpnet::simt

cudaError_t cudaMalloc(void** ptr, size_t bytes) {
  if (cudaError_t e = check_unsafe_call("cudaMalloc")) return e;
  return allocate_device(ptr, bytes, "cudaMalloc");
}

cudaError_t cudaFree(void* ptr) {
  if (cudaError_t e = check_unsafe_call("cudaFree")) return e;
  return free_device(ptr, "cudaFree");
}

// Pinned host memory is mapped into the device's address space under UVA,
// so kernels may read it: it is registered like device memory.
cudaError_t cudaMallocHost(void** ptr, size_t bytes) {
  if (cudaError_t e = check_unsafe_call("cudaMallocHost")) return e;
  return allocate_device(ptr, bytes, "cudaMallocHost", AllocationKind::pinned_host);
}
cudaError_t cudaFreeHost(void* ptr) {
  if (cudaError_t e = check_unsafe_call("cudaFreeHost")) return e;
  return free_device(ptr, "cudaFreeHost", AllocationKind::pinned_host);
}

namespace {

cudaError_t check_device_range(const char* call, const char* side, const void* p, size_t bytes) {
  if (bytes == 0 || find_allocation(p, bytes)) return cudaSuccess;
  return fail_with(cudaErrorInvalidValue,
                   cat(call, ": the ", side, " range [", p, ", +", bytes, ") is not inside a device allocation: ",
                       describe_near(allocation_snapshot(), reinterpret_cast<uintptr_t>(p), bytes)));
}

}  // namespace

namespace warpnet::simt {

cudaError_t copy_checked(const char* call, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return fail_with(cudaErrorInvalidMemcpyDirection, cat(call, ": ", int(kind), " is not a cudaMemcpyKind"));
  for (const auto& [side, p] : {std::pair{"destination", static_cast<const void*>(dst)}, {"source", src}})
    if (bytes != 0 && reinterpret_cast<uintptr_t>(p) < kNullPage)
      return fail_with(cudaErrorInvalidValue, cat(call, ": the ", side, " is a null pointer (", p, ")"));
  // cudaMemcpyDefault: under unified addressing the pointers say which side
  // is device memory (here: one that starts inside an allocation).
  const bool by_address = kind == cudaMemcpyDefault;
  const bool device_dst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice ||
                          (by_address && find_allocation(dst, 1));
  const bool device_src = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice ||
                          (by_address && find_allocation(src, 1));
  if (device_dst)
    if (cudaError_t e = check_device_range(call, "destination", dst, bytes)) return e;
  if (device_src)
    if (cudaError_t e = check_device_range(call, "source", src, bytes)) return e;
  if (bytes) std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t set_checked(const char* call, void* ptr, int value, size_t bytes) {
  if (cudaError_t e = check_device_range(call, "destination", ptr, bytes)) return e;
  if (bytes) std::memset(ptr, value, bytes);
  return cudaSuccess;
}

}  // namespace warpnet::simt

// Both run on the legacy stream, which a capture makes unusable.
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (cudaError_t e = check_legacy_stream_use("cudaMemcpy")) return e;
  return copy_checked("cudaMemcpy", dst, src, bytes, kind);
}

cudaError_t cudaMemset(void* ptr, int value, size_t bytes) {
  if (cudaError_t e = check_legacy_stream_use("cudaMemset")) return e;
  return set_checked("cudaMemset", ptr, value, bytes);
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  if (!event) return null_output("cudaEventCreate", "the event");
  *event = new CUevent_st;
  live<CUevent_st>().add(*event);
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (!event) return fail_with(cudaErrorInvalidResourceHandle, "cudaEventDestroy: null event");
  if (!live<CUevent_st>().remove(event))
    return fail_with(cudaErrorInvalidResourceHandle,
                     dead_handle_message("cudaEventDestroy", "event", event, "cudaEventCreate"));
  delete event;
  return cudaSuccess;
}
// On a capturing stream the record is part of the capture (CUDA uses such
// events to fork and join streams); the emulator keeps no node for it, and the
// event has no time until it is recorded outside a capture.
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (!event) return fail_with(cudaErrorInvalidResourceHandle, "cudaEventRecord: null event");
  if (cudaError_t e = check_live(live<CUevent_st>(), event, "cudaEventRecord", "event", "cudaEventCreate")) return e;
  const StreamUse use = use_stream(stream, "cudaEventRecord");
  if (use.action == StreamUse::refuse) return fail_with(use.error, use.message);
  event->captured = use.action == StreamUse::capture;
  if (event->captured) return cudaSuccess;
  event->time = std::chrono::steady_clock::now();
  event->recorded = true;
  return cudaSuccess;
}

namespace {

cudaError_t check_not_captured(const char* call, cudaEvent_t event) {
  if (!event->captured) return cudaSuccess;
  return fail_with(cudaErrorCapturedEvent, cat(call, ": the event was last recorded on a capturing stream, so it stands "
                                               "for work that has not run; record it outside the capture (cudaErrorCapturedEvent)"));
}

}  // namespace

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (!event) return fail_with(cudaErrorInvalidResourceHandle, "cudaEventSynchronize: null event");
  if (cudaError_t e = check_live(live<CUevent_st>(), event, "cudaEventSynchronize", "event", "cudaEventCreate")) return e;
  return check_not_captured("cudaEventSynchronize", event);
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms) return null_output("cudaEventElapsedTime", "the milliseconds");
  for (const cudaEvent_t event : {start, end})
    if (event)
      if (cudaError_t e = check_live(live<CUevent_st>(), event, "cudaEventElapsedTime", "event", "cudaEventCreate"))
        return e;
  if (start && end) {
    if (cudaError_t e = check_not_captured("cudaEventElapsedTime", start)) return e;
    if (cudaError_t e = check_not_captured("cudaEventElapsedTime", end)) return e;
  }
  if (!start || !end || !start->recorded || !end->recorded)
    return fail_with(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime: both events must have been recorded");
  *ms = std::chrono::duration<float, std::milli>(end->time - start->time).count();
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void* kernel, cudaFuncAttribute attr, int value) {
  if (!kernel) return fail_with(cudaErrorInvalidDeviceFunction, "cudaFuncSetAttribute: null kernel pointer");
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize)
    return fail_with(cudaErrorInvalidValue, cat("cudaFuncSetAttribute: attribute ", int(attr), " is not emulated"));
  // As on the GPU, the kernel's static __shared__ bytes count against the opt-in limit.
  size_t static_shared = 0;
  for (const SharedVariable& var : kernel_shared_variables(kernel)) static_shared += var.bytes;
  const size_t limit = static_shared < kSharedPerBlockOptin ? kSharedPerBlockOptin - static_shared : 0;
  if (value < 0 || size_t(value) > limit) {
    return fail_with(cudaErrorInvalidValue,
                     cat("cudaFuncSetAttribute: ", value, " bytes of dynamic shared memory; with the kernel's ",
                         static_shared, " static bytes the limit is ", limit, " (", kSharedPerBlockOptin,
                         " per block)"));
  }
  set_dynamic_shared_optin(kernel, size_t(value));
  return cudaSuccess;
}
