// The device allocations (cudaMalloc'ed buffers). A traced kernel's global
// access outside all of them is out of bounds; cudaMemcpy checks its device
// side against them as the CUDA runtime does.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace warpnet::simt {

struct Allocation {
  uintptr_t begin;
  size_t bytes;
  // (Written so that no sum can wrap: a size of size_t(-4), a negative
  // count cast, would pass `address + size <= begin + bytes`.)
  bool contains(uintptr_t address, size_t size) const {
    return address >= begin && size <= bytes && address - begin <= bytes - size;
  }
};

// Nothing is ever mapped this low (Linux's mmap_min_addr): an address
// below is a null pointer plus an offset.
constexpr uintptr_t kNullPage = uintptr_t(1) << 16;

// Which call made an allocation, and so which call frees it.
enum class AllocationKind { device, pinned_host };  // cudaMalloc/cudaFree, cudaMallocHost/cudaFreeHost

void register_allocation(const void* begin, size_t bytes, AllocationKind kind = AllocationKind::device);
// The kind of the live allocation starting at `begin`, if there is one.
std::optional<AllocationKind> allocation_kind(const void* begin);
bool unregister_allocation(const void* begin);

// Whether `begin` starts one of the allocations cudaFree released last (a
// second cudaFree of it is a double free).
bool was_freed(const void* begin);

// The allocation holding all of [address, address + bytes), if any.
std::optional<Allocation> find_allocation(const void* address, size_t bytes);

// All allocations, sorted: a launch looks accesses up here without a lock.
std::vector<Allocation> allocation_snapshot();

// "12 bytes past the end of a 4096-byte allocation at 0x7f..": where an
// address lies relative to the nearest allocation in `sorted`.
std::string describe_near(const std::vector<Allocation>& sorted, uintptr_t address, size_t bytes);

}  // namespace warpnet::simt
