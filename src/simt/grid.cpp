// A launch: check the configuration as the GPU would, then run the blocks,
// spread over worker threads (or in order on the calling thread).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "simt/block.hpp"
#include "simt/cluster.hpp"
#include "simt/fault_report.hpp"
#include "simt/grid_shadow.hpp"
#include "simt/limits.hpp"
#include "simt/stacks.hpp"
#include "simt/stepper.hpp"
#include "simt/symbols.hpp"
#include "simt/trace.hpp"
#include "simt/watchdog.hpp"

namespace warpnet::simt {

namespace {

std::atomic<int> configured_workers{-1};  // -1: not read from the environment yet
// Swapped by set_launch_progress while other threads' launches may call it:
// each launch takes its own reference once, under the lock.
using ProgressObserver = std::function<void(const LaunchProgress&)>;
std::mutex progress_mutex;
std::shared_ptr<const ProgressObserver> progress_observer;

std::shared_ptr<const ProgressObserver> current_progress_observer() {
  const std::lock_guard lock(progress_mutex);
  return progress_observer;
}

// Reports a launch's progress (set_launch_progress): quiet for its first
// second, then every quarter second, and at its end if it reported before.
class ProgressReporter {
 public:
  ProgressReporter(const std::string& kernel, uint64_t blocks)
      : observer_(current_progress_observer()), kernel_(kernel), blocks_(blocks) {}
  void after_block(uint64_t started) {
    if (!observer_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_) return;
    next_ = now + std::chrono::milliseconds(250);
    reported_ = true;
    (*observer_)(LaunchProgress{kernel_, std::min(started, blocks_), blocks_});
  }
  void at_end() {
    if (reported_ && observer_) (*observer_)(LaunchProgress{kernel_, blocks_, blocks_});
  }

 private:
  std::shared_ptr<const ProgressObserver> observer_;
  const std::string& kernel_;
  uint64_t blocks_;
  std::chrono::steady_clock::time_point next_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  bool reported_ = false;
};

void check_configuration(const std::string& name, const LaunchShape& shape, size_t static_shared,
                         size_t dynamic_limit) {
  const dim3 g = shape.grid, b = shape.block;
  const auto invalid = [&](const std::string& why) {
    throw LaunchError(cudaErrorInvalidConfiguration,
                      cat("kernel ", name, " launched with grid ", format_dim(g), ", block ", format_dim(b), ": ",
                          why, " (cudaErrorInvalidConfiguration)"));
  };
  if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0)
    invalid("every grid and block dimension must be at least 1");
  const unsigned block_dims[3] = {b.x, b.y, b.z}, grid_dims[3] = {g.x, g.y, g.z};
  for (int d = 0; d < 3; ++d) {
    if (block_dims[d] > kMaxBlockDim[d])
      invalid(cat("block dimension ", "xyz"[d], " is ", block_dims[d], ", the limit is ", kMaxBlockDim[d]));
    if (grid_dims[d] > kMaxGridDim[d])
      invalid(cat("grid dimension ", "xyz"[d], " is ", grid_dims[d], ", the limit is ", kMaxGridDim[d]));
  }
  const uint64_t threads = uint64_t(b.x) * b.y * b.z;
  if (threads > kMaxThreadsPerBlock)
    invalid(cat("a block has ", threads, " threads, the limit is ", kMaxThreadsPerBlock));
  if (static_shared > kSharedPerBlock) {
    throw LaunchError(cudaErrorInvalidValue, cat("kernel ", name, " declares ", static_shared,
                                                 " bytes of static __shared__ memory, the limit is ", kSharedPerBlock,
                                                 " (nvcc refuses to compile it)"));
  }
  if (shape.dynamic_shared > dynamic_limit) {
    throw LaunchError(cudaErrorInvalidValue,
                      cat("kernel ", name, " launched with ", shape.dynamic_shared,
                          " bytes of dynamic shared memory; with its ", static_shared,
                          " static bytes the limit is ", dynamic_limit,
                          dynamic_limit + static_shared >= kSharedPerBlockOptin
                              ? cat(" (", kSharedPerBlockOptin, " per block, static and dynamic together)")
                              : cat(" (raise it up to ", kSharedPerBlockOptin - static_shared,
                                    " with cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, "
                                    "bytes))"),
                          " (cudaErrorInvalidValue)"));
  }
}

// Clusters: CUDA's rules (the grid a whole number of clusters, at most 8 CTAs
// without the non-portable opt-in, which the emulator does not offer), and
// the emulator's own limit (cluster.hpp: static __shared__ is one copy per worker).
void check_clusters(const std::string& name, const LaunchShape& shape, size_t static_shared) {
  const dim3 g = shape.grid, c = shape.cluster;
  const uint64_t size = uint64_t(c.x) * c.y * c.z;
  if (size == 1) return;
  const auto invalid = [&](const std::string& why) {
    throw LaunchError(cudaErrorInvalidClusterSize, cat("kernel ", name, " launched with grid ", format_dim(g),
                                                       " in clusters of ", format_dim(c), ": ", why,
                                                       " (cudaErrorInvalidClusterSize)"));
  };
  if (c.x == 0 || c.y == 0 || c.z == 0) invalid("every cluster dimension must be at least 1");
  if (size > kMaxClusterSize) invalid(cat("a cluster has ", size, " CTAs, the portable limit is ", kMaxClusterSize));
  if (g.x % c.x || g.y % c.y || g.z % c.z) invalid("each grid dimension must be a multiple of the cluster's");
  if (static_shared > 0)
    throw LaunchError(cudaErrorNotSupported,
                      cat("kernel ", name, " declares ", static_shared, " bytes of static __shared__ memory and is "
                          "launched in clusters: the emulator runs a cluster's CTAs on one worker thread, where a "
                          "static __shared__ variable is one copy for all of them; put it in dynamic shared memory "
                          "(cudaErrorNotSupported)"));
}

}  // namespace

uint3 block_index(uint64_t linear, dim3 grid) {
  return {unsigned(linear % grid.x), unsigned(linear / grid.x % grid.y),
          unsigned(linear / (uint64_t(grid.x) * grid.y))};
}

uint64_t block_linear(uint3 index, dim3 grid) {
  return index.x + uint64_t(grid.x) * (index.y + uint64_t(grid.y) * index.z);
}

void set_workers(int workers) { configured_workers = workers < 0 ? 0 : workers; }

int workers() {
  int n = configured_workers.load();
  if (n < 0) {
    const char* env = std::getenv("WARPNET_SIMT_WORKERS");
    n = env ? std::max(0, std::atoi(env)) : 0;
    configured_workers = n;
  }
  return n > 0 ? n : int(std::max(1u, std::thread::hardware_concurrency()));
}

std::string kernel_name(const void* kernel) { return function_name(kernel); }

void set_launch_progress(std::function<void(const LaunchProgress&)> observer) {
  auto next = observer ? std::make_shared<const ProgressObserver>(std::move(observer)) : nullptr;
  const std::lock_guard lock(progress_mutex);
  progress_observer = std::move(next);
}

void check_launch(const KernelCall& call, const LaunchShape& shape) {
  const std::string name = kernel_name(call.kernel);
  size_t static_shared = 0;
  for (const SharedVariable& var : kernel_shared_variables(call.kernel)) static_shared += var.bytes;
  const size_t optin = dynamic_shared_optin(call.kernel);
  const size_t default_limit = static_shared < kSharedPerBlock ? kSharedPerBlock - static_shared : 0;
  // Static and dynamic together stay within the opt-in limit (cudaFuncSetAttribute checks it too).
  const size_t optin_limit = static_shared < kSharedPerBlockOptin ? kSharedPerBlockOptin - static_shared : 0;
  check_configuration(name, shape, static_shared, std::min(std::max(optin, default_limit), optin_limit));
  check_clusters(name, shape, static_shared);
}

void run(const KernelCall& call, const LaunchShape& shape) {
  check_launch(call, shape);
  const std::string name = kernel_name(call.kernel);

  const uint64_t blocks = uint64_t(shape.grid.x) * shape.grid.y * shape.grid.z;
  // Workers take whole clusters (a block is a cluster of one).
  const dim3 cd = shape.cluster;
  const unsigned cluster_size = cd.x * cd.y * cd.z;
  const dim3 clusters_grid{shape.grid.x / cd.x, shape.grid.y / cd.y, shape.grid.z / cd.z};
  const uint64_t clusters = blocks / cluster_size;
  // A stepper runs the launch on its own fiber of this thread: the deterministic
  // mode. An abandoned one's launch stops before its next block (Stepper::abandon).
  Stepper* stepper = active_stepper();
  if (stepper) stepper->launch_begun();
  // Not a stepped launch: its pauses are the user's.
  std::optional<watchdog::LaunchWatch> watch;
  if (!stepper) watch.emplace(name);
  report_faults_in_kernels();
  const unsigned threads = stepper ? 1 : std::min<uint64_t>(unsigned(workers()), clusters);
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr error;
  TraceSink sink(name, shape);
  GridShadow shadow;  // the traced build's race check between blocks

  ProgressReporter progress(name, blocks);
  const auto worker = [&](bool reports) {
    use_alternate_signal_stack();
    // One set of stacks and shared window per CTA of a cluster.
    std::vector<std::unique_ptr<WorkerResources>> resources;
    for (unsigned r = 0; r < cluster_size; ++r) resources.push_back(borrow_worker_resources());
    try {
      std::vector<std::unique_ptr<Block>> ctas;
      for (auto& set : resources)
        ctas.push_back(
            std::make_unique<Block>(call, shape, name, set->stacks, set->dynamic_shared.data(), sink, shadow));
      if (cluster_size == 1) {
        for (uint64_t i; !failed && !(stepper && stepper->abandoned()) && (i = next++) < blocks;) {
          ctas[0]->run(block_index(i, shape.grid));
          if (reports) progress.after_block(next.load(std::memory_order_relaxed));
        }
      } else {
        std::vector<Block*> members;
        for (auto& cta : ctas) members.push_back(cta.get());
        Cluster cluster(std::move(members), cd);
        for (uint64_t i; !failed && !(stepper && stepper->abandoned()) && (i = next++) < clusters;) {
          const uint3 c = block_index(i, clusters_grid);
          cluster.run({c.x * cd.x, c.y * cd.y, c.z * cd.z});
          if (reports) progress.after_block(next.load(std::memory_order_relaxed) * cluster_size);
        }
      }
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
    for (auto& set : resources) return_worker_resources(std::move(set));
  };
  if (threads == 1) {
    worker(true);
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker, false);
    worker(true);
    for (auto& thread : pool) thread.join();
  }
  watch.reset();  // the blocks have run; publishing a trace is not the kernel's time
  if (error) std::rethrow_exception(error);
  progress.at_end();
  if (sink.traced()) sink.publish();
}

}  // namespace warpnet::simt
