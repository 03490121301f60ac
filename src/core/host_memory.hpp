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
// available". The system counts memory as used only once its pages are
// touched: an allocation that passed must be backed at once
// (back_with_pages), or the next check counts it as free again.
std::string host_allocation_refusal(int64_t bytes);

// Has the kernel back the whole pages of [p, p + bytes) now, contents
// unchanged (madvise MADV_POPULATE_WRITE, Linux 5.14 and up): two large
// tensors allocated before either is written were otherwise both checked
// against the same free memory. Empty when done or the kernel cannot do it
// (older kernels: the check is then a best effort); otherwise why not.
std::string back_with_pages(void* p, int64_t bytes);

}  // namespace warpnet
