// Tensors on Device::emu: storage is the emulator's device memory
// (cudaMalloc through src/simt), so kernels launched on it are checked
// against its registered allocations like any emulated buffer.
#include "core/device_memory.hpp"
#include "core/error.hpp"
#include "kernels/common/cuda_compat.hpp"

namespace warpnet::device {
namespace {

void* allocate(size_t bytes) {
  void* p = nullptr;
  return cudaMalloc(&p, bytes) == cudaSuccess ? p : nullptr;
}

void copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  const cudaError_t error = cudaMemcpy(dst, src, bytes, kind);
  WN_CHECK(error == cudaSuccess, cuda_failure(error, cat("emulator: cudaMemcpy of ", bytes, " bytes")));
}

const bool registered = [] {
  register_device_memory(Device::emu,
                         {.allocate = allocate,
                          .release = [](void* p) { cudaFree(p); },
                          .to_device = [](void* d, const void* h, size_t n) { copy(d, h, n, cudaMemcpyHostToDevice); },
                          .to_host = [](void* h, const void* d, size_t n) { copy(h, d, n, cudaMemcpyDeviceToHost); },
                          .within = [](void* d, const void* s, size_t n) { copy(d, s, n, cudaMemcpyDeviceToDevice); }});
  return true;
}();

}  // namespace
}  // namespace warpnet::device
