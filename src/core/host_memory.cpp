#include "core/host_memory.hpp"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/error.hpp"
#include "core/memory.hpp"

namespace warpnet {

int64_t available_memory_bytes() {
  int64_t available = -1;
  std::ifstream meminfo("/proc/meminfo");
  long long kib = 0;
  for (std::string line; std::getline(meminfo, line);)  // "MemAvailable:   12345678 kB"
    if (std::sscanf(line.c_str(), "MemAvailable: %lld kB", &kib) == 1) available = int64_t(kib) * 1024;
  // In a container the cgroup's limit binds first (cgroup v2; "max": none).
  // Its memory.current counts the page cache, which the kernel drops under
  // pressure: the inactive part of it is left out of what is used, as
  // `docker stats` leaves it out.
  long long limit = 0, used = 0;
  std::ifstream max("/sys/fs/cgroup/memory.max"), current("/sys/fs/cgroup/memory.current");
  if (max >> limit && current >> used) {
    std::ifstream stat("/sys/fs/cgroup/memory.stat");
    long long inactive_file = 0;
    for (std::string line; std::getline(stat, line);)
      if (std::sscanf(line.c_str(), "inactive_file %lld", &inactive_file) == 1) break;
    const int64_t left = std::max<int64_t>(int64_t(limit) - (int64_t(used) - int64_t(inactive_file)), 0);
    available = available < 0 ? left : std::min(available, left);
  }
  // Freed blocks the heap keeps are the process's own, reused before new pages.
  if (available >= 0) available += int64_t(mallinfo2().fordblks);
  return available;
}

std::string host_allocation_refusal(int64_t bytes) {
  if (bytes < kCheckedAllocationBytes) return "";
  const int64_t available = available_memory_bytes();
  if (available < 0 || bytes <= available) return "";
  return cat("this machine has ", format_bytes(available), " available");
}

std::string back_with_pages(void* p, int64_t bytes) {
#ifdef MADV_POPULATE_WRITE
  // madvise takes whole pages: the ones inside the block (its edges share
  // pages with the heap's other blocks, already backed or small).
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(bytes)) / page * page;
  if (end <= begin) return "";
  if (madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0) return "";
  if (errno == EINVAL || errno == ENOSYS) return "";  // a kernel before 5.14: not done, not an error
  return cat("the system could not back it with memory (", std::strerror(errno), ")");
#else
  (void)p;
  (void)bytes;
  return "";
#endif
}

}  // namespace warpnet
