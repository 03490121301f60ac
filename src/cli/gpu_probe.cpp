#include "cli/gpu_probe.hpp"

#include "core/build_info.hpp"

#if WARPNET_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace warpnet::cli {

GpuProbe probe_gpus() {
  GpuProbe probe;
#if WARPNET_HAS_CUDA
  probe.toolkit = true;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    // cudaErrorInsufficientDriver / cudaErrorNoDevice: a machine without a GPU.
    probe.status = std::string("no usable GPU: ") + cudaGetErrorString(err);
    return probe;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    probe.gpus.push_back({prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                          double(prop.totalGlobalMem) / (1024.0 * 1024 * 1024)});
  }
  if (probe.gpus.empty()) probe.status = "the CUDA runtime reports no GPU";
#else
  probe.status = "built without the CUDA toolkit";
#endif
  return probe;
}

}  // namespace warpnet::cli
