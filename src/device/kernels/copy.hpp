// Which copy of the kernel registrations this file is being compiled into.
// Every src/device/kernels/<op>/*.cpp is compiled three times (see
// src/device/CMakeLists.txt): for the emulator, for the emulator with the
// tracer's instrumentation (WARPNET_TRACED_COPY), and by nvcc for the GPU.
// Kernels are included into an anonymous namespace, so the copies' symbols
// stay apart at link time (a template instance would otherwise be merged).
#pragma once
#include "core/error.hpp"
#include "device/registry.hpp"
#include "kernels/common/cuda_compat.hpp"

#ifndef WARPNET_TRACED_COPY
#define WARPNET_TRACED_COPY 0
#endif

namespace warpnet::device {
namespace {  // one value per copy, so never one merged symbol
#if defined(__CUDACC__)
constexpr Copy kThisCopy = Copy::cuda;
#elif WARPNET_TRACED_COPY
constexpr Copy kThisCopy = Copy::traced;
#else
constexpr Copy kThisCopy = Copy::emulator;
#endif

// A CUDA call that failed in the host code beside the kernels (their
// launches, workspaces, tuners and graphs). It keeps the error, so a caller
// tells a launch the GPU refused (a tuner's candidate with too big a grid)
// from a fault by the code, not by reading the message.
class CudaCallFailed : public Error {
 public:
  CudaCallFailed(cudaError_t error, const std::string& message) : Error(message), error(error) {}
  cudaError_t error;
};

// The one check of a CUDA call there: throws CudaCallFailed with
// cuda_failure's words, `what` (its parts joined by cat) naming the call and
// what it was for. The parts are joined only on failure: tuners check in
// their timing loops.
template <class... What>
void check_cuda(cudaError_t error, const What&... what) {
  if (error != cudaSuccess) throw CudaCallFailed(error, cuda_failure(error, cat(what...)));
}

// After a launch: throws the launch's CUDA error, named and explained by this
// copy's runtime (the emulator names kernel, block, thread and address).
inline void check_launch() { check_cuda(cudaGetLastError()); }
}  // namespace
}  // namespace warpnet::device
