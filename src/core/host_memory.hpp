// How much memory this machine can still back. Linux grants almost any
// allocation (overcommit) and kills the process with no word when it runs
// out as the pages are touched; so large allocations are checked here first
// and refused with their size and what is available.
#pragma once
#include <cstdint>
#include <string>

namespace warpnet {

// Memory new allocations can have without swapping (swap is not counted: a
// tensor that would live in it is refused rather than run for hours):
// /proc/meminfo's MemAvailable, bounded by the cgroup's limit in a container
// (cgroup v2, its inactive page cache counted as free), plus the freed heap
// this process keeps for reuse (tensor.cpp keeps it); -1 where the system
// does not say.
int64_t available_memory_bytes();

// Allocations from this size up are checked (reading /proc takes
// microseconds, not worth it for the many small ones).
inline constexpr int64_t kCheckedAllocationBytes = int64_t(256) << 20;

// Empty when `bytes` is below kCheckedAllocationBytes, fits, or nothing is
// known; otherwise why it cannot be held: "this machine has 9.10 GiB
// available". Not a promise: allocations made and not yet touched are not
// counted as used until they are.
std::string host_allocation_refusal(int64_t bytes);

}  // namespace warpnet
