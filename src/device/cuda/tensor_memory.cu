// Tensors on Device::cuda: Storage's bytes from cudaMalloc, copies with
// cudaMemcpy (core/device_memory.hpp). Registered when this file is linked,
// which every program linking warpnet_gpu in a CUDA build does.
#include "core/device_memory.hpp"
#include "device/cuda/check.cuh"

namespace warpnet::device::gpu {
namespace {

void* allocate(size_t bytes) {
  void* p = nullptr;
  if (cudaMalloc(&p, bytes) == cudaSuccess) return p;
  cudaGetLastError();  // out of memory is not sticky: clear it, Storage reports it
  return nullptr;
}

const bool registered = [] {
  register_device_memory(
      Device::cuda,
      {.allocate = allocate,
       .release = [](void* p) { cudaFree(p); },
       .to_device = [](void* d, const void* h,
                       size_t n) { WN_CUDA(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice), "tensor to cuda"); },
       .to_host = [](void* h, const void* d,
                     size_t n) { WN_CUDA(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost), "tensor from cuda"); }});
  return true;
}();

}  // namespace
}  // namespace warpnet::device::gpu
