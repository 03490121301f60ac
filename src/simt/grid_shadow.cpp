#include "simt/grid_shadow.hpp"

#include <algorithm>

namespace warpnet::simt {

namespace {

std::atomic<uint64_t> shadows_made{0};

// The pages a worker touched last, and whose, by the page number's low bits:
// most accesses land on a page one of the last few did (a GEMM's A, B and C),
// and the map's lock and lookup cost more than the check.
struct RecentPage {
  uint64_t shadow = 0;  // GridShadow::id_ (ids are never reused, addresses may be)
  uintptr_t number = 0;
  void* page = nullptr;
};
thread_local std::array<RecentPage, 16> recent_pages;

}  // namespace

GridShadow::GridShadow() : id_(++shadows_made) {}

GridShadow::Page& GridShadow::page(uintptr_t number) {
  RecentPage& recent = recent_pages[number % recent_pages.size()];
  if (recent.shadow == id_ && recent.number == number) return *static_cast<Page*>(recent.page);
  std::lock_guard lock(mutex_);
  std::unique_ptr<Page>& page = pages_[number];
  if (!page) page = std::make_unique<Page>();
  recent = {id_, number, page.get()};
  return *page;
}

std::optional<GridShadow::Conflict> GridShadow::note(uintptr_t address, size_t bytes, uint64_t block, Use use,
                                                     const void* pc) {
  if (block + 1 >= kSeveral) return std::nullopt;  // past 2^29 blocks the shadow cannot name the block
  const uint32_t me = uint32_t(block + 1);
  const uintptr_t end = address + bytes;
  for (uintptr_t number = address >> kPageBits; (number << kPageBits) < end; ++number) {
    Page& shadow = page(number);
    const uintptr_t from = std::max(address, number << kPageBits), to = std::min(end, (number + 1) << kPageBits);
    for (uintptr_t a = from; a < to; ++a) {
      const uintptr_t offset = a & ((uintptr_t(1) << kPageBits) - 1);
      std::atomic<uint32_t>& state = shadow.states[offset];
      uint32_t old = state.load(std::memory_order_relaxed), next;
      do {
        const uint32_t owner = old >> kUseBits, uses = old & ((1u << kUseBits) - 1);
        if (old == 0) {
          next = me << kUseBits | use;
        } else if (owner == me) {
          next = old | use;  // the block's own accesses: its threads' order is the in-block checker's
        } else if (uses == use && use != kWrite) {
          next = kSeveral << kUseBits | use;  // reads by many blocks, or atomics by many
        } else {
          // The other block's code address, when it has stored it after its change.
          return Conflict{owner - 1, owner == kSeveral, uint8_t(uses), a,
                          shadow.pcs[offset].load(std::memory_order_relaxed)};
        }
      } while (next != old && !state.compare_exchange_weak(old, next, std::memory_order_relaxed));
      if (next != old) shadow.pcs[offset].store(pc, std::memory_order_relaxed);
    }
  }
  return std::nullopt;
}

}  // namespace warpnet::simt
