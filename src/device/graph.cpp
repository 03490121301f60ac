#include "device/graph.hpp"

#include <array>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/device_memory.hpp"
#include "core/error.hpp"

namespace warpnet::device {

// The memory of one graph: the blocks allocated while it was captured, and
// which of them its step has freed (reusable only while capturing it again,
// or by the same capture).
struct GraphPool {
  std::map<size_t, std::vector<void*>> free;  // bytes -> blocks the step released
  bool alive = true;                          // false once its StepGraph is gone
};

namespace {

thread_local bool this_thread_captures = false;

using MakeRuntime = std::unique_ptr<GraphRuntime> (*)();
std::array<MakeRuntime, 3>& runtimes() {
  static std::array<MakeRuntime, 3> table{};
  return table;
}

// Storage's allocations on one device, routed through the pool of the graph
// being captured. Installed over the backend's DeviceMemory the first time
// a graph is made for the device, and left in place: a block a graph owns
// may be released long after the capture (a parameter's gradient), and must
// still come back to its pool, not to the backend, where an eager tensor
// could take it while the graph writes it at every replay.
struct PooledMemory {
  std::mutex mutex;
  DeviceMemory under;                        // the backend's own
  std::shared_ptr<GraphPool> capturing;      // the pool new blocks come from, while a capture runs
  struct Owned {
    std::shared_ptr<GraphPool> pool;
    size_t bytes;
  };
  std::unordered_map<void*, Owned> owned;    // every block a live or dead pool handed out

  void* allocate(size_t bytes) {
    std::lock_guard lock(mutex);
    if (!capturing) return under.allocate(bytes);
    std::vector<void*>& reusable = capturing->free[bytes];
    if (!reusable.empty()) {
      void* p = reusable.back();
      reusable.pop_back();
      return p;
    }
    void* p = under.allocate(bytes);
    if (p) owned[p] = {capturing, bytes};
    return p;
  }

  void release(void* p) {
    std::lock_guard lock(mutex);
    const auto it = owned.find(p);
    if (it == owned.end()) return under.release(p);
    if (it->second.pool->alive) return it->second.pool->free[it->second.bytes].push_back(p);
    owned.erase(it);
    under.release(p);
  }

  // A graph is gone: the blocks its step had freed go back to the backend;
  // the ones still held (gradients, outputs) go back when released.
  void retire(GraphPool& pool) {
    std::lock_guard lock(mutex);
    pool.alive = false;
    for (auto& [bytes, blocks] : pool.free)
      for (void* p : blocks) {
        owned.erase(p);
        under.release(p);
      }
    pool.free.clear();
  }
};

// One per device, made and installed on first use; never destroyed
// (tensors may be released during static destruction).
template <Device D>
PooledMemory& pooled() {
  static PooledMemory* memory = [] {
    auto* m = new PooledMemory;
    m->under = device_memory(D);
    register_device_memory(D, {.allocate = [](size_t bytes) { return pooled<D>().allocate(bytes); },
                               .release = [](void* p) { pooled<D>().release(p); },
                               .to_device = m->under.to_device,
                               .to_host = m->under.to_host,
                               .within = m->under.within});
    return m;
  }();
  return *memory;
}

PooledMemory& pooled(Device device) {
  WN_CHECK(device != Device::cpu, "graph: the CPU runs no kernels to capture");
  return device == Device::emu ? pooled<Device::emu>() : pooled<Device::cuda>();
}

}  // namespace

void register_graph_runtime(Device device, MakeRuntime make) { runtimes()[size_t(device)] = make; }

bool capturing() { return this_thread_captures; }

StepGraph::StepGraph(Device device) : device_(device) {
  WN_CHECK(device != Device::cpu, "graph: the CPU runs no kernels to capture; graphs are for emu and cuda");
  const MakeRuntime make = runtimes()[size_t(device)];
  WN_CHECK(make, "graph: no ", name_of(device), " backend is linked into this program");
  runtime_ = make();
  pooled(device);  // installs the pool routing before the first tensor of a capture
}

StepGraph::~StepGraph() {
  runtime_.reset();  // the graph first: nothing may run on the pool after it is retired
  if (pool_) pooled(device_).retire(*pool_);
}

void StepGraph::capture(const std::function<void()>& step, Launches launches) {
  WN_CHECK(!this_thread_captures, "graph: a capture is already running on this thread");
  PooledMemory& memory = pooled(device_);
  if (pool_) memory.retire(*pool_);  // the previous graph's memory, if capturing again
  nodes_ = 0;
  pool_ = std::make_shared<GraphPool>();
  {
    std::lock_guard lock(memory.mutex);
    memory.capturing = pool_;
  }
  struct Restore {  // on every path, the thread and the allocator stop capturing
    PooledMemory& memory;
    ~Restore() {
      this_thread_captures = false;
      std::lock_guard lock(memory.mutex);
      memory.capturing.reset();
    }
  } restore{memory};
  runtime_->begin_capture(launches == Launches::programmatic);
  this_thread_captures = true;
  try {
    step();
  } catch (...) {
    runtime_->abandon_capture();
    throw;
  }
  this_thread_captures = false;
  nodes_ = runtime_->end_capture();
}

void StepGraph::replay() {
  WN_CHECK(ready(), "graph: replay before a successful capture");
  runtime_->replay();
}

}  // namespace warpnet::device
