// The streams, events, graphs and graph execs that exist now. A handle that
// was destroyed, or never made (an uninitialized variable), is answered with
// cudaErrorInvalidResourceHandle instead of being read: reading it would
// crash or corrupt the heap. CUDA leaves the use of a destroyed handle
// undefined, and its runtime usually answers so. (Memory the allocator hands
// out again may give a new handle a destroyed one's address; that one then
// passes, as it can on a GPU.)
#pragma once
#include <mutex>
#include <string>
#include <unordered_set>

#include "core/error.hpp"
#include "simt/capture.hpp"  // fail_with, and the handles' types
#include "simt/cuda_runtime.hpp"

namespace warpnet::simt {

// A set of live handles, safe to use from several host threads.
template <class T>
class LiveHandles {
 public:
  void add(const T* handle) {
    std::lock_guard lock(mutex_);
    live_.insert(handle);
  }
  // False when it was not live: a second destroy.
  bool remove(const T* handle) {
    std::lock_guard lock(mutex_);
    return live_.erase(handle) > 0;
  }
  bool contains(const T* handle) const {
    std::lock_guard lock(mutex_);
    return live_.count(handle) > 0;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_set<const T*> live_;
};

// The live handles of type T (CUstream_st, CUevent_st, CUgraph_st,
// CUgraphExec_st): one set per type for the whole process, never destroyed:
// a static object's destructor that destroys its stream at exit must still
// find it.
template <class T>
LiveHandles<T>& live() {
  static auto* handles = new LiveHandles<T>;
  return *handles;
}

// "cudaEventRecord: event 0x55d0 was destroyed, or never created by cudaEventCreate".
inline std::string dead_handle_message(const std::string& call, const char* what, const void* handle,
                                       const char* maker) {
  return cat(call, ": ", what, " ", handle, " was destroyed, or never created by ", maker,
             " (cudaErrorInvalidResourceHandle)");
}

// cudaSuccess for a live handle, else the error above, recorded (fail_with).
template <class T>
cudaError_t check_live(const LiveHandles<T>& handles, const T* handle, const char* call, const char* what,
                       const char* maker) {
  if (handles.contains(handle)) return cudaSuccess;
  return fail_with(cudaErrorInvalidResourceHandle, dead_handle_message(call, what, handle, maker));
}

}  // namespace warpnet::simt
