// Launching a kernel on the emulator: every thread of the grid runs the
// kernel function as a fiber; blocks are spread over worker threads.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "simt/copy_namespace.hpp"
#include "simt/cuda_runtime.hpp"
#include "simt/cuda_types.hpp"

namespace warpnet::simt {

// A launch that failed: the cudaError_t a GPU would give (invalid
// configuration, illegal address, ...) and a message naming kernel, block,
// thread and address.
class LaunchError : public Error {
 public:
  LaunchError(cudaError_t code, const std::string& message) : Error(message), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

struct LaunchShape {
  dim3 grid;
  dim3 block;
  size_t dynamic_shared = 0;  // bytes, as the third <<<>>> argument
  // Launched as a programmatic dependent (warpnet::launch_dependent_kernel
  // while programmatic_launch_slot() is on): in a traced block, a thread
  // that reads or writes global memory before it has called
  // wait_for_prior_grids() is an error, since on a GPU it could run before
  // the kernel queued before it has finished.
  bool programmatic = false;
  // Thread-block clusters (warpnet::launch_kernel_in_clusters; CUDA's
  // cudaLaunchAttributeClusterDimension): the CTAs of each cluster run
  // together on one worker (cluster.hpp). {1,1,1}: no clusters.
  dim3 cluster{1, 1, 1};
};

// A kernel with its arguments bound, type-erased so the scheduler is not a template.
struct KernelCall {
  const void* kernel;                // the kernel function: names it, finds its __shared__ variables
  void (*invoke)(const void* bound);  // calls the kernel for the current emulated thread
  const void* bound;
  size_t bound_bytes;  // the arguments live here; traced kernels read them when they start
};

// Throws the LaunchError a GPU's launch call gives for this configuration
// (grid, block, shared memory, clusters), before anything runs.
void check_launch(const KernelCall& call, const LaunchShape& shape);

// Runs the whole grid before returning (check_launch first); throws LaunchError.
void run(const KernelCall& call, const LaunchShape& shape);

// Each argument of a bound call as an address: the pointer's value for an
// object pointer, 0 for anything else. A graph checks at replay that the
// buffers its kernels' pointers were captured into are still allocated.
using ArgumentAddresses = std::vector<uintptr_t> (*)(const void* bound);

// The templates below bind a kernel's arguments and call it on each emulated
// thread: a traced file's instantiation is instrumented, and one with the
// same argument types in a plain file must not be merged with it (the
// plain kernel would start by reporting its argument reads, and get a
// checker that sees none of its accesses). copy_namespace.hpp says why.
inline namespace WARPNET_SIMT_COPY {

template <class T>
uintptr_t argument_address(const T& value) {
  if constexpr (std::is_pointer_v<T> && std::is_object_v<std::remove_pointer_t<T>>)
    return reinterpret_cast<uintptr_t>(value);
  else
    return 0;
}

}  // inline namespace WARPNET_SIMT_COPY

// The calling thread's warpnet::programmatic_launches() (cuda_compat.hpp):
// one variable for the emulator's plain and traced copies. Dependent
// launches made while it is on carry LaunchShape::programmatic, captured
// ones too.
bool& programmatic_launch_slot();

// Marks the calling emulated thread as having waited for the grids before
// its own (griddepcontrol.wait; warpnet::wait_for_prior_grids). Grids run
// one after another here, so there is nothing to wait for: what it changes
// is the check above. Host code calling it is an error.
void wait_for_prior_grids();

// Runs the whole grid on `stream` before returning, or, while the stream
// captures, records it into the capture (`arguments` owns what call.bound
// points to, and the graph keeps it). Throws LaunchError, also for what a
// capture forbids: a launch on the legacy stream (nullptr) while a capture is
// active, a launch on a stream whose capture was invalidated (capture.cpp).
void run_on(cudaStream_t stream, const KernelCall& call, const LaunchShape& shape,
            std::shared_ptr<const void> arguments, ArgumentAddresses addresses);

inline namespace WARPNET_SIMT_COPY {

// Calls b.kernel with b.params: the copies into the parameters made here,
// in this copy's code (std::apply's would be one instantiation for both).
template <class Bound, size_t... I>
void call_bound(const Bound& b, std::index_sequence<I...>) {
  b.kernel(std::get<I>(b.params)...);
}

// kernel<<<shape, stream>>>(args...): arguments convert to the kernel's
// parameter types once, and each thread receives its own copy, as on the
// GPU. They live on the heap: a capturing stream keeps them for every replay.
template <class... P, class... A>
void launch_shaped_on(cudaStream_t stream, void (*kernel)(P...), const LaunchShape& shape, A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "kernel launched with the wrong number of arguments");
  struct Bound {
    void (*kernel)(P...);
    std::tuple<std::decay_t<P>...> params;
  };
  auto bound = std::make_shared<const Bound>(Bound{kernel, std::tuple<std::decay_t<P>...>(std::forward<A>(args)...)});
  const KernelCall call{reinterpret_cast<const void*>(kernel),
                        [](const void* p) {
                          call_bound(*static_cast<const Bound*>(p), std::index_sequence_for<P...>{});
                        },
                        bound.get(), sizeof(Bound)};
  const ArgumentAddresses addresses = [](const void* p) {
    const Bound& b = *static_cast<const Bound*>(p);
    return std::apply([](const auto&... a) { return std::vector<uintptr_t>{argument_address(a)...}; }, b.params);
  };
  run_on(stream, call, shape, std::move(bound), addresses);
}

// kernel<<<grid, block, shared, stream>>>(args...), an ordinary launch.
template <class... P, class... A>
void launch_on(cudaStream_t stream, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, A&&... args) {
  launch_shaped_on(stream, kernel, LaunchShape{grid, block, shared}, std::forward<A>(args)...);
}

// kernel<<<grid, block, shared>>>(args...) on the legacy default stream.
template <class... P, class... A>
void launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, A&&... args) {
  launch_on(nullptr, kernel, grid, block, shared, std::forward<A>(args)...);
}

}  // inline namespace WARPNET_SIMT_COPY

// Worker threads that run blocks. 1 is the deterministic mode: blocks run in
// order (x fastest) on the calling thread, so traces and errors repeat exactly.
// 0 (the default) means one per hardware thread; WARPNET_SIMT_WORKERS overrides it.
void set_workers(int workers);
int workers();

// The name of the kernel at this address, e.g. "sgemm_tiled<16>".
std::string kernel_name(const void* kernel);

// How far a long launch has got: a big grid on the emulator takes minutes
// (a traced 1024³ naive SGEMM about two), and a command should not sit
// silent that long. The observer is called by the worker on the launching
// thread once the launch has run for a second, then every quarter second,
// and once more with blocks_started == blocks at its end; never for a launch
// that ends within the second. Null (the default): no reports.
struct LaunchProgress {
  const std::string& kernel;
  uint64_t blocks_started, blocks;  // started: those done, and one per worker in progress
};
void set_launch_progress(std::function<void(const LaunchProgress&)> observer);

}  // namespace warpnet::simt

namespace warpnet::simt {

// CUDA's error model for host code written against the runtime API: a failed
// launch or call leaves its code for cudaGetLastError() (and, for faults while
// running, cudaDeviceSynchronize()); the emulator keeps the full message too.
void record_error(cudaError_t code, const std::string& message);
// The message of the most recent error on this host thread ("" if none).
const std::string& last_error_message();

// The calling thread's stream for warpnet::launch_stream() (cuda_compat.hpp):
// one variable for the emulator's plain and traced copies of that helper.
cudaStream_t& launch_stream_slot();

inline namespace WARPNET_SIMT_COPY {

// kernel<<<grid, block, shared, stream>>>(args) with CUDA's error model instead of an exception.
template <class... P, class... A>
void launch_recording_errors_on(cudaStream_t stream, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared,
                                A&&... args) {
  try {
    launch_on(stream, kernel, grid, block, shared, std::forward<A>(args)...);
  } catch (const LaunchError& e) {
    record_error(e.code(), e.what());
  }
}

// launch_shaped_on with CUDA's error model (warpnet::launch_dependent_kernel).
template <class... P, class... A>
void launch_recording_errors_shaped_on(cudaStream_t stream, void (*kernel)(P...), const LaunchShape& shape,
                                       A&&... args) {
  try {
    launch_shaped_on(stream, kernel, shape, std::forward<A>(args)...);
  } catch (const LaunchError& e) {
    record_error(e.code(), e.what());
  }
}

}  // inline namespace WARPNET_SIMT_COPY

}  // namespace warpnet::simt
