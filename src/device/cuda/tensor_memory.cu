// Tensors on Device::cuda: Storage's bytes from cudaMalloc through a small
// cache, copies with cudaMemcpy (core/device_memory.hpp). Registered when
// this file is linked, which every program linking warpnet_gpu in a CUDA
// build does.
//
// Why a cache: a training step frees and allocates the same sizes every batch
// (activations, gradients), and cudaMalloc costs tens of microseconds while
// cudaFree waits for the whole device, so freeing for real would stall the
// GPU dozens of times per step. A released block goes to a free list of its
// size and the next request of that size takes it back. Reuse is safe because
// every kernel and copy of the backend runs on the default stream, in order:
// whatever still reads a block when it is released finishes before anything
// launched after its reuse. (PyTorch's caching allocator is the grown-up form,
// with streams, splitting and statistics.) The memory tracker counts tensors'
// bytes, not the cache's.
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/device_memory.hpp"
#include "device/cuda/check.cuh"

namespace warpnet::device::gpu {
namespace {

class BlockCache {
 public:
  void* allocate(size_t bytes) {
    const size_t size = rounded(bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<void*>& blocks = free_[size];
    if (!blocks.empty()) {
      void* p = blocks.back();
      blocks.pop_back();
      return p;
    }
    void* p = fresh(size);
    if (!p) {  // out of memory: give the cached blocks back and try once more
      release_cached();
      p = fresh(size);
    }
    if (p) size_of_[p] = size;
    return p;
  }

  void release(void* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = size_of_.find(p);
    if (it != size_of_.end()) free_[it->second].push_back(p);
  }

 private:
  // 512-byte steps, so slightly different sizes share a list.
  static size_t rounded(size_t bytes) { return (std::max<size_t>(bytes, 1) + 511) / 512 * 512; }

  static void* fresh(size_t size) {
    void* p = nullptr;
    if (cudaMalloc(&p, size) == cudaSuccess) return p;
    cudaGetLastError();  // out of memory is not sticky: clear it, Storage reports it
    return nullptr;
  }

  void release_cached() {
    for (auto& [size, blocks] : free_) {
      for (void* p : blocks) {
        cudaFree(p);
        size_of_.erase(p);
      }
      blocks.clear();
    }
  }

  std::mutex mutex_;
  std::map<size_t, std::vector<void*>> free_;  // size -> released blocks
  std::unordered_map<void*, size_t> size_of_;  // every block this cache made
};

// Never destroyed: tensors released during static destruction still find it,
// and the driver takes the memory back at exit.
BlockCache& cache() {
  static BlockCache* c = new BlockCache;
  return *c;
}

const bool registered = [] {
  register_device_memory(
      Device::cuda,
      {.allocate = [](size_t bytes) { return cache().allocate(bytes); },
       .release = [](void* p) { cache().release(p); },
       .to_device = [](void* d, const void* h,
                       size_t n) { WN_CUDA(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice), "tensor to cuda"); },
       .to_host = [](void* h, const void* d,
                     size_t n) { WN_CUDA(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost), "tensor from cuda"); },
       // cudaMemcpy between two device buffers returns without waiting for
       // the copy (CUDA runtime API, "API synchronization behavior"); it
       // runs on the legacy stream, after what is queued before it.
       .within = [](void* d, const void* s,
                    size_t n) { WN_CUDA(cudaMemcpy(d, s, n, cudaMemcpyDeviceToDevice), "tensor within cuda"); }});
  return true;
}();

}  // namespace
}  // namespace warpnet::device::gpu
