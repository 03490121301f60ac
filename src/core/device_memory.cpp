#include "core/device_memory.hpp"

#include <array>
#include <atomic>
#include <mutex>
#include <vector>

#include "core/error.hpp"

namespace warpnet {
namespace {

// A function-local static: backends register during static initialization,
// in whatever order the linker put the files.
std::array<const DeviceMemory*, 3>& registered() {
  static std::array<const DeviceMemory*, 3> table{};
  return table;
}

// The registrations a later one replaced (the graph pool wraps a backend's
// memory and registers the wrapper): storage made through one may still
// use it, so it is kept, and kept reachable, never freed.
std::vector<const DeviceMemory*>& superseded() {
  static auto* list = new std::vector<const DeviceMemory*>;
  return *list;
}

std::array<std::atomic<int64_t>, 3>& transfers() {
  static std::array<std::atomic<int64_t>, 3> counts{};
  return counts;
}

}  // namespace

void count_transfer(Transfer kind) { ++transfers()[size_t(kind)]; }

TransferCounts transfer_counts() {
  return {transfers()[size_t(Transfer::to_device)].load(), transfers()[size_t(Transfer::to_host)].load(),
          transfers()[size_t(Transfer::within)].load()};
}

void register_device_memory(Device device, DeviceMemory memory) {
  static std::mutex mutex;  // the graph pools register on first use, from any thread
  const std::lock_guard lock(mutex);
  const DeviceMemory*& slot = registered()[size_t(device)];
  if (slot) superseded().push_back(slot);
  slot = new DeviceMemory(memory);  // lives as long as the program
}

const DeviceMemory& device_memory(Device device) {
  const DeviceMemory* memory = registered()[size_t(device)];
  WN_CHECK(memory, "tensor: no ", name_of(device), " backend is linked into this program (link warpnet_kernels",
           device == Device::cuda ? "_cuda, built when the CUDA toolkit is found)" : ")");
  return *memory;
}

}  // namespace warpnet
