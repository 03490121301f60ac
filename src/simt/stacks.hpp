// Pooled fiber stacks. Allocating a fresh stack per emulated thread made a
// naive SGEMM 128^3 13x slower in the prototype (60 ms vs 4.7 ms), so each
// worker keeps one stack per thread slot and reuses it for every block.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

namespace warpnet::simt {

class StackSet {
 public:
  static constexpr size_t kStackBytes = 64 * 1024;

  StackSet() = default;
  ~StackSet();
  StackSet(const StackSet&) = delete;
  StackSet& operator=(const StackSet&) = delete;

  // Makes sure stacks 0..count-1 exist (mapped once, kept for later blocks).
  void reserve(size_t count);
  // The usable range of stack i; below it lies a guard page, so an overflow
  // faults instead of corrupting the neighbouring thread's stack.
  char* bottom(size_t i) const { return regions_[i] + kGuard; }
  // Each top is offset by a different multiple of 64 bytes: with every top at
  // the same page offset, the fibers' saved contexts would all fall into the
  // same few cache sets and evict each other on every switch.
  char* top(size_t i) const { return regions_[i] + kGuard + kStackBytes - (i % 63) * 64; }
  // Whether `address` is in stack i's guard page: the stack overflowed.
  bool in_guard(size_t i, const void* address) const {
    const auto* a = static_cast<const char*>(address);
    return i < regions_.size() && a >= regions_[i] && a < regions_[i] + kGuard;
  }

 private:
  static constexpr size_t kGuard = 4096;
  std::vector<char*> regions_;
};

// A worker's dynamic shared memory: its own mapping, large enough for any
// launch, so an overrun stays inside it and is recognisable as shared memory.
class SharedWindow {
 public:
  static constexpr size_t kBytes = 512 * 1024;  // > the 227 KiB opt-in limit
  SharedWindow();
  ~SharedWindow();
  SharedWindow(const SharedWindow&) = delete;
  SharedWindow& operator=(const SharedWindow&) = delete;
  unsigned char* data() const { return data_; }

 private:
  unsigned char* data_;
};

// Per-worker resources that outlive a launch: stacks and the dynamic shared
// window. Workers borrow one set for a launch and give it back.
struct WorkerResources {
  StackSet stacks;
  SharedWindow dynamic_shared;
};

std::unique_ptr<WorkerResources> borrow_worker_resources();
void return_worker_resources(std::unique_ptr<WorkerResources> resources);

}  // namespace warpnet::simt
