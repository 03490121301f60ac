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

// After a launch: throws the launch's CUDA error, named and explained by this
// copy's runtime (the emulator names kernel, block, thread and address).
inline void check_launch() {
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) fail(cudaGetErrorName(error), ": ", cuda_error_detail(error));
}
}  // namespace
}  // namespace warpnet::device
