// How a Storage gets bytes on a device other than the CPU. core knows no
// device API: the device layer registers one DeviceMemory per device it
// supports (the emulator's in src/device/emu_memory.cpp, CUDA's in
// src/device/cuda/), and a program that links no backend for a device gets
// a clear error instead of a crash.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/dtype.hpp"

namespace warpnet {

struct DeviceMemory {
  void* (*allocate)(size_t bytes);  // nullptr when out of device memory
  void (*release)(void* pointer);
  void (*to_device)(void* device_dst, const void* host_src, size_t bytes);  // throws Error on failure
  void (*to_host)(void* host_dst, const void* device_src, size_t bytes);    // throws Error on failure
  // Device to device, ordered after the work queued before it; the host
  // need not wait for it (a training step queues its copies and moves on).
  void (*within)(void* device_dst, const void* device_src, size_t bytes);  // throws Error on failure
};

// Tensor copies between the host and a device, and within one, since the
// program started (Tensor::copy_from counts them). A copy to or from the
// host's pageable memory waits for everything queued on the device, so the
// first two say how often a training step made the host wait.
struct TransferCounts {
  int64_t to_device = 0, to_host = 0, within = 0;
};
enum class Transfer { to_device, to_host, within };
void count_transfer(Transfer kind);
TransferCounts transfer_counts();

// Called at static initialization by a backend.
void register_device_memory(Device device, DeviceMemory memory);
// Throws naming the device when no backend for it is linked into the program.
const DeviceMemory& device_memory(Device device);

}  // namespace warpnet
