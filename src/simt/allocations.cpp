#include "simt/allocations.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "core/error.hpp"

namespace warpnet::simt {
namespace {

std::shared_mutex mutex;
std::map<uintptr_t, size_t> allocations;  // begin -> bytes

}  // namespace

void register_allocation(const void* begin, size_t bytes) {
  std::unique_lock lock(mutex);
  allocations[reinterpret_cast<uintptr_t>(begin)] = bytes;
}

bool unregister_allocation(const void* begin) {
  std::unique_lock lock(mutex);
  return allocations.erase(reinterpret_cast<uintptr_t>(begin)) == 1;
}

std::optional<Allocation> find_allocation(const void* address, size_t bytes) {
  const auto a = reinterpret_cast<uintptr_t>(address);
  std::shared_lock lock(mutex);
  auto it = allocations.upper_bound(a);
  if (it == allocations.begin()) return std::nullopt;
  --it;
  const Allocation found{it->first, it->second};
  if (!found.contains(a, bytes)) return std::nullopt;
  return found;
}

std::vector<Allocation> allocation_snapshot() {
  std::shared_lock lock(mutex);
  std::vector<Allocation> out;
  out.reserve(allocations.size());
  for (const auto& [begin, bytes] : allocations) out.push_back({begin, bytes});
  return out;
}

std::string describe_near(const std::vector<Allocation>& sorted, uintptr_t address, size_t bytes) {
  const Allocation* nearest = nullptr;
  uintptr_t best = UINTPTR_MAX;
  for (const Allocation& a : sorted) {
    const uintptr_t distance = address < a.begin ? a.begin - address : address - (a.begin + a.bytes);
    if (address >= a.begin && address < a.begin + a.bytes) return cat("crosses the end of a ", a.bytes,
                                                                       "-byte allocation at 0x", std::hex, a.begin);
    if (distance < best) best = distance, nearest = &a;
  }
  if (!nearest) return "no device memory is allocated";
  if (address >= nearest->begin + nearest->bytes) {
    return cat(address - (nearest->begin + nearest->bytes), " bytes past the end of a ", nearest->bytes,
               "-byte allocation at 0x", std::hex, nearest->begin);
  }
  return cat(nearest->begin - address, " bytes before a ", nearest->bytes, "-byte allocation at 0x", std::hex,
             nearest->begin);
}

}  // namespace warpnet::simt
