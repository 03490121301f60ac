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
std::map<uintptr_t, AllocationKind> kinds;  // begin -> the call that made it, for the live ones
// The last kFreedKept allocations cudaFree released, newest last: an access
// into one is a use after free, which the message should say.
constexpr size_t kFreedKept = 64;
std::vector<Allocation> freed;

// Past this distance from every allocation an address is no near miss of
// one (an index a little past the end) but a pointer into something else.
constexpr uintptr_t kNear = uintptr_t(1) << 20;

}  // namespace

void register_allocation(const void* begin, size_t bytes, AllocationKind kind) {
  std::unique_lock lock(mutex);
  allocations[reinterpret_cast<uintptr_t>(begin)] = bytes;
  kinds[reinterpret_cast<uintptr_t>(begin)] = kind;
}

std::optional<AllocationKind> allocation_kind(const void* begin) {
  std::shared_lock lock(mutex);
  const auto it = kinds.find(reinterpret_cast<uintptr_t>(begin));
  if (it == kinds.end()) return std::nullopt;
  return it->second;
}

bool unregister_allocation(const void* begin) {
  std::unique_lock lock(mutex);
  const auto it = allocations.find(reinterpret_cast<uintptr_t>(begin));
  if (it == allocations.end()) return false;
  if (freed.size() == kFreedKept) freed.erase(freed.begin());
  freed.push_back({it->first, it->second});
  kinds.erase(it->first);
  allocations.erase(it);
  return true;
}

bool was_freed(const void* begin) {
  std::shared_lock lock(mutex);
  return std::any_of(freed.begin(), freed.end(),
                     [&](const Allocation& a) { return a.begin == reinterpret_cast<uintptr_t>(begin); });
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
  if (address < kNullPage) return cat("a null pointer (the address is ", address, ", where nothing is ever mapped)");
  const Allocation* nearest = nullptr;
  uintptr_t best = UINTPTR_MAX;
  for (const Allocation& a : sorted) {
    const uintptr_t distance = address < a.begin ? a.begin - address : address - (a.begin + a.bytes);
    if (address >= a.begin && address < a.begin + a.bytes) return cat("crosses the end of a ", a.bytes,
                                                                       "-byte allocation at 0x", std::hex, a.begin);
    if (distance < best) best = distance, nearest = &a;
  }
  {  // (after the live ones: freed memory may since have been handed out again)
    std::shared_lock lock(mutex);
    for (auto a = freed.rbegin(); a != freed.rend(); ++a)
      if (a->contains(address, 1))
        return cat("inside a ", a->bytes, "-byte allocation at 0x", std::hex, a->begin,
                   " that cudaFree has released: a use after free");
  }
  if (!nearest) return "no device memory is allocated";
  if (best > kNear)
    return cat("in no device allocation, nor near one (the nearest, ", nearest->bytes, " bytes at 0x", std::hex,
               nearest->begin, std::dec, ", is ", best, " bytes away): a host pointer, one never set, or an index "
               "far out of range");
  if (address >= nearest->begin + nearest->bytes) {
    return cat(address - (nearest->begin + nearest->bytes), " bytes past the end of a ", nearest->bytes,
               "-byte allocation at 0x", std::hex, nearest->begin);
  }
  return cat(nearest->begin - address, " bytes before a ", nearest->bytes, "-byte allocation at 0x", std::hex,
             nearest->begin);
}

}  // namespace warpnet::simt
