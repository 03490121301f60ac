#include "simt/stacks.hpp"

#include <link.h>
#include <pthread.h>
#include <sys/mman.h>

#include <mutex>

#include "core/error.hpp"

namespace warpnet::simt {
namespace {

// The static TLS of every object loaded at start (the executable's first).
size_t static_tls_bytes() {
  size_t total = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* sum) {
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_TLS) *static_cast<size_t*>(sum) += info->dlpi_phdr[i].p_memsz;
        return 0;
      },
      &total);
  return total;
}

// The emulator's __shared__ is `static thread_local` (cuda.hpp): every
// kernel's static shared arrays, in every copy compiled into the program,
// sit in each thread's static TLS, which glibc carves out of the top of the
// thread's stack. test_simt's was 8.3 MB on 2026-11-30 and is 21 MB now (Release,
// cpu-only), more than the 8 MiB default stack:
// OpenMP's worker threads (Eigen's GEMM in the CPU references) were left with
// a few KiB of stack and crashed. So, at load, before any thread is created,
// the default stack of new threads becomes that TLS plus the default.
const bool thread_stacks_hold_tls = [] {
  pthread_attr_t attr;
  if (pthread_getattr_default_np(&attr) != 0) return false;
  size_t size = 0;
  bool ok = pthread_attr_getstacksize(&attr, &size) == 0;
  const size_t wanted = static_tls_bytes() + (size > 0 ? size : size_t(8) << 20);
  if (ok && size < wanted) ok = pthread_attr_setstacksize(&attr, wanted) == 0 && pthread_setattr_default_np(&attr) == 0;
  pthread_attr_destroy(&attr);
  return ok;
}();

}  // namespace

StackSet::~StackSet() {
  for (char* region : regions_) munmap(region, kGuard + kStackBytes);
}

void StackSet::reserve(size_t count) {
  while (regions_.size() < count) {
    void* region = mmap(nullptr, kGuard + kStackBytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    WN_CHECK(region != MAP_FAILED, "simt: cannot map a ", kStackBytes, "-byte fiber stack");
    mprotect(region, kGuard, PROT_NONE);
    regions_.push_back(static_cast<char*>(region));
  }
}

SharedWindow::SharedWindow() {
  void* region = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  WN_CHECK(region != MAP_FAILED, "simt: cannot map ", kBytes, " bytes for dynamic shared memory");
  data_ = static_cast<unsigned char*>(region);
}

SharedWindow::~SharedWindow() { munmap(data_, kBytes); }

namespace {
std::mutex pool_mutex;
std::vector<std::unique_ptr<WorkerResources>> pool;
}  // namespace

std::unique_ptr<WorkerResources> borrow_worker_resources() {
  std::lock_guard lock(pool_mutex);
  if (pool.empty()) return std::make_unique<WorkerResources>();
  auto resources = std::move(pool.back());
  pool.pop_back();
  return resources;
}

void return_worker_resources(std::unique_ptr<WorkerResources> resources) {
  std::lock_guard lock(pool_mutex);
  pool.push_back(std::move(resources));
}

}  // namespace warpnet::simt
