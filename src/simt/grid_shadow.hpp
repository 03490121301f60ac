// The traced build's race check between the blocks of one launch: which
// blocks read, wrote or updated (atomically) each byte of global memory.
//
// A grid's blocks may run in any order, or at once, and nothing orders one
// block's accesses against another's (short of a __threadfence() and a flag,
// or a grid-wide sync). So a byte that one block writes and another reads,
// writes or updates is a race, whichever order the emulator happened to run
// them in: `C[i] += partial` from the blocks of a split sum gives the right
// answer here, one block after another, and loses updates on a GPU. Reads by
// many blocks are fine, and so are atomics by many (and volatile accesses,
// which PTX makes strong as it does atomics). The checker stops recording a
// block's accesses at its __threadfence() (Checker::check_between_blocks).
//
// Twelve bytes of shadow per byte a launch touches (the uses, and the code
// address of the access that last changed them, to name the other block's
// line), in pages for 4 KiB made at first touch and dropped with the launch;
// workers update it at once (one compare-and-swap per byte). Every launch
// has one; untraced kernels leave it empty.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace warpnet::simt {

class GridShadow {
 public:
  enum Use : uint8_t { kRead = 1, kWrite = 2, kAtomic = 4 };
  // The shadow of each byte a traced launch touches: its state and the pc.
  static constexpr size_t kBytesPerByte = sizeof(uint32_t) + sizeof(const void*);
  GridShadow();
  // Another block's use that races with this one: the first such block, or
  // several blocks (`several`) when more than one read the byte (or updated it).
  struct Conflict {
    uint64_t block = 0;  // linear index (x fastest), when not several
    bool several = false;
    uint8_t uses = 0;  // Use bits
    uintptr_t address = 0;  // the first byte that conflicts
    const void* pc = nullptr;  // the access that added the last of `uses`; null when not yet known
  };

  // Block `block` (linear index) used `bytes` bytes at `address` so, by the
  // instruction `pc`: the first byte another block used in a way that races
  // with it, if any.
  std::optional<Conflict> note(uintptr_t address, size_t bytes, uint64_t block, Use use, const void* pc);

 private:
  // One byte's state: bits 0-2 its uses, the rest 1 + the one block that
  // used it, or kSeveral. 0: untouched.
  static constexpr unsigned kUseBits = 3;
  static constexpr uint32_t kSeveral = (uint32_t(1) << (32 - kUseBits)) - 1;
  static constexpr unsigned kPageBits = 12;
  struct Page {
    std::array<std::atomic<uint32_t>, size_t(1) << kPageBits> states;
    std::array<std::atomic<const void*>, size_t(1) << kPageBits> pcs;
  };
  static_assert(sizeof(Page) == kBytesPerByte << kPageBits, "kBytesPerByte is what a page holds per byte");
  Page& page(uintptr_t number);

  std::mutex mutex_;  // guards pages_ (the map, not the bytes)
  std::unordered_map<uintptr_t, std::unique_ptr<Page>> pages_;
  const uint64_t id_;
};

}  // namespace warpnet::simt
