// Launching a kernel on the emulator: every thread of the grid runs the
// kernel function as a fiber; blocks are spread over worker threads.
#pragma once
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/error.hpp"
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
};

// A kernel with its arguments bound, type-erased so the scheduler is not a template.
struct KernelCall {
  const void* kernel;                // the kernel function: names it, finds its __shared__ variables
  void (*invoke)(const void* bound);  // calls the kernel for the current emulated thread
  const void* bound;
  size_t bound_bytes;  // the arguments live here; traced kernels read them when they start
};

// Runs the whole grid before returning; throws LaunchError.
void run(const KernelCall& call, const LaunchShape& shape);

// kernel<<<grid, block, shared>>>(args...): arguments convert to the kernel's
// parameter types once, and each thread receives its own copy, as on the GPU.
template <class... P, class... A>
void launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "kernel launched with the wrong number of arguments");
  struct Bound {
    void (*kernel)(P...);
    std::tuple<std::decay_t<P>...> params;
  };
  const Bound bound{kernel, std::tuple<std::decay_t<P>...>(std::forward<A>(args)...)};
  const KernelCall call{reinterpret_cast<const void*>(kernel),
                        [](const void* p) {
                          const Bound& b = *static_cast<const Bound*>(p);
                          std::apply(b.kernel, b.params);
                        },
                        &bound, sizeof bound};
  run(call, {grid, block, shared});
}

// Worker threads that run blocks. 1 is the deterministic mode: blocks run in
// order (x fastest) on the calling thread, so traces and errors repeat exactly.
// 0 (the default) means one per hardware thread; WARPNET_SIMT_WORKERS overrides it.
void set_workers(int workers);
int workers();

// The name of the kernel at this address, e.g. "sgemm_tiled<16>".
std::string kernel_name(const void* kernel);

}  // namespace warpnet::simt

namespace warpnet::simt {

// CUDA's error model for host code written against the runtime API: a failed
// launch or call leaves its code for cudaGetLastError() (and, for faults while
// running, cudaDeviceSynchronize()); the emulator keeps the full message too.
void record_error(cudaError_t code, const std::string& message);
// The message of the most recent error on this host thread ("" if none).
const std::string& last_error_message();

// kernel<<<...>>>(args) with CUDA's error model instead of an exception.
template <class... P, class... A>
void launch_recording_errors(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, A&&... args) {
  try {
    launch(kernel, grid, block, shared, std::forward<A>(args)...);
  } catch (const LaunchError& e) {
    record_error(e.code(), e.what());
  }
}

}  // namespace warpnet::simt
