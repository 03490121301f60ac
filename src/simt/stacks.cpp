#include "simt/stacks.hpp"

#include <sys/mman.h>

#include <mutex>

#include "core/error.hpp"

namespace warpnet::simt {

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
