// The emulated device's limits (those of sm_80..sm_90) and the per-kernel
// shared memory opt-in, shared by launch checks and cudaGetDeviceProperties.
#pragma once
#include <cstddef>

namespace warpnet::simt {

inline constexpr unsigned kMaxThreadsPerBlock = 1024;
inline constexpr unsigned kMaxBlockDim[3] = {1024, 1024, 64};
inline constexpr unsigned kMaxGridDim[3] = {2147483647u, 65535, 65535};
inline constexpr size_t kSharedPerBlock = 48 * 1024;          // without opt-in
inline constexpr size_t kSharedPerBlockOptin = 227 * 1024;    // H100/H200 with cudaFuncSetAttribute
inline constexpr unsigned kMaxClusterSize = 8;                 // CTAs per cluster, CUDA's portable limit

// The dynamic shared memory a kernel may request: 48 KiB minus its static
// shared memory, unless raised by cudaFuncSetAttribute(MaxDynamicSharedMemorySize).
size_t dynamic_shared_optin(const void* kernel);
void set_dynamic_shared_optin(const void* kernel, size_t bytes);

}  // namespace warpnet::simt
