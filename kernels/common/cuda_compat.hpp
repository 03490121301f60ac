// The one header every kernel includes. Under nvcc it is CUDA itself; under
// g++ it is the SIMT emulator (src/simt/), so the same .cu file runs on a GPU
// and, unchanged, on any CPU.
#pragma once
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
// The emulator's cuda.hpp offers half/bf16/fp8 to every kernel; so does this.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#define WARPNET_KERNEL_COPY cuda_copy
#else
#include "simt/copy_namespace.hpp"
#include "simt/cuda.hpp"
#define WARPNET_KERNEL_COPY WARPNET_SIMT_COPY
#endif

namespace warpnet {
// One program may hold the emulator's copies of the kernels and nvcc's; the
// helpers below differ between them (launch_kernel is <<<>>> in one, the
// emulator in the other) under the same signatures, so each copy gets its own
// inline namespace and the linker never merges them (see simt/copy_namespace.hpp).
inline namespace WARPNET_KERNEL_COPY {

// Blocks needed to cover n items with `per_block` > 0 each, in the type
// n + per_block has: ceil_div(int, int) is an int, and a 64-bit count stays
// 64-bit instead of wrapping. A negative n of a signed type gives 0 or less
// (the division truncates toward zero), which loops over "steps" rely on.
template <class Count, class PerBlock>
__host__ __device__ constexpr auto ceil_div(Count n, PerBlock per_block) {
  using T = decltype(n + per_block);
  return (T(n) + T(per_block) - 1) / T(per_block);
}

// The block's dynamic shared memory (the third launch argument) as T*.
// Kernels use this instead of `extern __shared__ T name[]`, which has no g++ spelling.
template <class T>
__device__ __forceinline__ T* dynamic_shared() {
#if defined(__CUDACC__)
  extern __shared__ __align__(16) unsigned char warpnet_dynamic_shared[];
  return reinterpret_cast<T*>(warpnet_dynamic_shared);
#else
  return static_cast<T*>(::warpnet::simt::dynamic_shared_memory());
#endif
}

// The stream launch_kernel sends this host thread's launches to: the legacy
// default stream (nullptr) unless set. Set it to a capturing stream and every
// launch_kernel below is recorded into its CUDA graph (on the emulator too:
// src/simt/README.md, "Streams, capture and graphs"). The emulator's plain
// and traced copies share one variable (simt::launch_stream_slot), so host
// code sets it once for kernels of either copy.
#if defined(__CUDACC__)
inline cudaStream_t& launch_stream() { static thread_local cudaStream_t stream = nullptr; return stream; }
#else
inline cudaStream_t& launch_stream() { return ::warpnet::simt::launch_stream_slot(); }
#endif

// Programmatic dependent launch (Hopper, sm_90). While this is on, this
// host thread's launch_dependent_kernel calls (below) let each kernel start
// before the one queued before it on the stream has finished: its blocks
// are launched as soon as every block of the one before has called
// allow_dependent_grids() (or exited), and wait in wait_for_prior_grids()
// until that grid has finished and its writes are visible. What that saves
// is the gap between two kernels, the next one's launch hidden under the
// last one's run. Only kernels that call wait_for_prior_grids() before they
// read what an earlier kernel wrote (or write what one reads) are launched
// with launch_dependent_kernel; every launch_kernel stays an ordinary
// launch, which starts when the kernel before it has finished, so a step
// may mix the two. Off by default; on while a StepGraph captures with
// Launches::programmatic. The emulator runs grids one after another anyway,
// and checks the rule instead: in a traced block of a dependent launch made
// while this is on, a thread's global access before its
// wait_for_prior_grids() is an error (simt::LaunchShape::programmatic).
#if defined(__CUDACC__)
inline bool& programmatic_launches() {
  static thread_local bool on = false;
  return on;
}
#else
inline bool& programmatic_launches() { return ::warpnet::simt::programmatic_launch_slot(); }
#endif

// The kernel side of programmatic dependent launch: wait for the grids this
// one depends on, and let the next grid launch. No-ops below sm_90 and when
// the kernel was launched the ordinary way; on the emulator the wait marks
// the thread for the check above.
__device__ __forceinline__ void wait_for_prior_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#elif !defined(__CUDACC__)
  ::warpnet::simt::wait_for_prior_grids();
#endif
}
__device__ __forceinline__ void allow_dependent_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

#if defined(__CUDACC__)
// A launch past CUDA's grid or block limits fails with a bare "invalid
// configuration argument"; the launch helpers below note which limit here,
// for cuda_error_detail (the emulator's own message names it). Empty after
// a launch within the limits; a raw <<<>>> launch leaves it as it was.
inline std::string& launch_limit_note() {
  static thread_local std::string note;
  return note;
}
inline void note_launch_limits(dim3 grid, dim3 block) {
  const unsigned g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
  constexpr unsigned kGrid[3] = {2147483647u, 65535u, 65535u}, kBlock[3] = {1024u, 1024u, 64u};
  std::string& note = launch_limit_note();
  note.clear();
  for (int d = 0; d < 3 && note.empty(); ++d) {
    const char* axis = d == 0 ? "x" : d == 1 ? "y" : "z";
    if (g[d] == 0 || b[d] == 0)
      note = std::string(g[d] == 0 ? "grid" : "block") + " dimension " + axis + " is 0: every one must be at least 1";
    else if (g[d] > kGrid[d])
      note = std::string("grid dimension ") + axis + " is " + std::to_string(g[d]) + ", the limit is " +
             std::to_string(kGrid[d]);
    else if (b[d] > kBlock[d])
      note = std::string("block dimension ") + axis + " is " + std::to_string(b[d]) + ", the limit is " +
             std::to_string(kBlock[d]);
  }
  if (note.empty() && (unsigned long long)b[0] * b[1] * b[2] > 1024)
    note = "a block has " + std::to_string((unsigned long long)b[0] * b[1] * b[2]) + " threads, the limit is 1024";
  if (!note.empty()) note = "invalid configuration argument: " + note;
}
#endif

// kernel<<<grid, block, shared_bytes, launch_stream()>>>(args...) on both
// compilers. Errors follow CUDA's model: check cudaGetLastError()
// afterwards (WARPNET_CUDA_CHECK).
template <class... P, class... A>
void launch_kernel(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared_bytes, A&&... args) {
#if defined(__CUDACC__)
  note_launch_limits(grid, block);
  kernel<<<grid, block, shared_bytes, launch_stream()>>>(std::forward<A>(args)...);
#else
  ::warpnet::simt::launch_recording_errors_on(launch_stream(), kernel, grid, block, shared_bytes,
                                              std::forward<A>(args)...);
#endif
}

// launch_kernel for a kernel that calls allow_dependent_grids() and
// wait_for_prior_grids() before it touches global memory: a programmatic
// dependent launch while programmatic_launches() is on, an ordinary one
// otherwise.
template <class... P, class... A>
void launch_dependent_kernel(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared_bytes, A&&... args) {
#if defined(__CUDACC__)
  note_launch_limits(grid, block);
  if (programmatic_launches()) {
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid, config.blockDim = block, config.dynamicSmemBytes = shared_bytes;
    config.stream = launch_stream(), config.attrs = &attribute, config.numAttrs = 1;
    cudaLaunchKernelEx(&config, kernel, std::forward<A>(args)...);  // its error, if any, is the last error
    return;
  }
  kernel<<<grid, block, shared_bytes, launch_stream()>>>(std::forward<A>(args)...);
#else
  ::warpnet::simt::launch_recording_errors_shaped_on(launch_stream(), kernel,
                                                     {grid, block, shared_bytes, programmatic_launches()},
                                                     std::forward<A>(args)...);
#endif
}

// Opts `kernel` in to shared_bytes of dynamic shared memory, more than the
// default 48 KiB. False when refused: then launch nothing, and the refusal
// stays the last error, so cudaGetLastError() names the real cause (the
// launch's own error would be a bare "invalid argument").
template <class... P>
bool opt_in_dynamic_shared(void (*kernel)(P...), size_t shared_bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes)) == cudaSuccess;
}

// launch_kernel for a kernel that needs more than the default 48 KiB of
// dynamic shared memory (opt_in_dynamic_shared first).
template <class... P, class... A>
void launch_kernel_opted_in(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared_bytes, A&&... args) {
  if (opt_in_dynamic_shared(kernel, shared_bytes)) launch_kernel(kernel, grid, block, shared_bytes, std::forward<A>(args)...);
}

// launch_kernel_opted_in in thread-block clusters of `cluster` CTAs (sm_90;
// each grid dimension a multiple of the cluster's): the CTAs of a cluster run
// at once, on neighbouring SMs, and may reach each other's shared memory
// (kernels/common/hopper.hpp: cluster_sync, multicast TMA, remote arrives).
template <class... P, class... A>
void launch_kernel_in_clusters(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared_bytes, dim3 cluster,
                               A&&... args) {
  if (!opt_in_dynamic_shared(kernel, shared_bytes)) return;
#if defined(__CUDACC__)
  note_launch_limits(grid, block);
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = cluster.x, attribute.val.clusterDim.y = cluster.y, attribute.val.clusterDim.z = cluster.z;
  cudaLaunchConfig_t config{};
  config.gridDim = grid, config.blockDim = block, config.dynamicSmemBytes = shared_bytes;
  config.stream = launch_stream(), config.attrs = &attribute, config.numAttrs = 1;
  cudaLaunchKernelEx(&config, kernel, std::forward<A>(args)...);  // its error, if any, is the last error
#else
  ::warpnet::simt::launch_recording_errors_shaped_on(launch_stream(), kernel,
                                                     {grid, block, shared_bytes, false, cluster},
                                                     std::forward<A>(args)...);
#endif
}

// The full story of the last error: on the emulator it names kernel, block,
// thread and address; the CUDA runtime has only its generic string, and
// for a configuration error the limit the last launch broke.
inline const char* cuda_error_detail(cudaError_t error) {
#if defined(__CUDACC__)
  if (error == cudaErrorInvalidConfiguration && !launch_limit_note().empty()) return launch_limit_note().c_str();
  return cudaGetErrorString(error);
#else
  const std::string& message = ::warpnet::simt::last_error_message();
  return message.empty() ? cudaGetErrorString(error) : message.c_str();
#endif
}

// How a failed CUDA call is told, in every layer and copy: "<what> failed:
// <CUDA name>: <detail>", or "<CUDA name>: <detail>" for a launch (`what`
// empty). The checks that throw (device/kernels/copy.hpp's check_cuda, the
// GPU runtime's WN_CUDA) and the one that exits (below) all word it here.
inline std::string cuda_failure(cudaError_t error, const std::string& what) {
  return (what.empty() ? std::string() : what + " failed: ") + cudaGetErrorName(error) + ": " +
         cuda_error_detail(error);
}

}  // namespace WARPNET_KERNEL_COPY
}  // namespace warpnet

// Index of element (r, c) of a rows x cols matrix operand sits: row-major, or,
// when Transposed, stored as its transpose (cols x rows, row-major). Backprop
// multiplies by transposes (dX = dY @ W^T, dW = X^T @ dY); kernels read the
// stored matrix this way instead of copying a transposed one.
// Global like CUDA's own built-ins: kernels sit outside any namespace.
template <bool Transposed>
__host__ __device__ __forceinline__ constexpr int index_of(int r, int c, int rows, int cols) {
  return Transposed ? c * rows + r : r * cols + c;
}

// Exits with file, line and cuda_failure when a runtime call or launch
// fails: for the examples and lessons. Host code that wants exceptions calls
// check_cuda (device/kernels/copy.hpp).
#define WARPNET_CUDA_CHECK(expr)                                                                          \
  do {                                                                                                    \
    const cudaError_t warpnet_error_ = (expr);                                                            \
    if (warpnet_error_ != cudaSuccess) {                                                                  \
      const std::string warpnet_told_ = ::warpnet::cuda_failure(warpnet_error_, #expr);                  \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, warpnet_told_.c_str());                     \
      std::exit(EXIT_FAILURE);                                                                            \
    }                                                                                                     \
  } while (0)
