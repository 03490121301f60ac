// What a traced launch saw, per warp-level memory instruction: how many
// 32-byte sectors its global accesses touched against the fewest possible,
// how many shared-memory wavefronts (bank-conflict replays) it needed.
// Kernels compiled with warpnet_simt_traced() fill it; others leave it empty.
#pragma once
#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "simt/launch.hpp"

namespace warpnet::simt {

enum class Space : uint8_t { global, shared };

// One memory instruction of the kernel, summed over every warp that ran it.
struct InstructionStats {
  const void* pc = nullptr;  // the instruction (return address of its access callback)
  bool write = false;
  Space space = Space::global;
  unsigned bytes = 0;          // per lane
  uint64_t requests = 0;       // warp-level executions
  uint64_t active_lanes = 0;   // summed over requests
  uint64_t inactive_lanes = 0;  // lanes of the warp that skipped the instruction (divergence), summed
  uint64_t sectors = 0;        // global: distinct 32-byte sectors touched
  uint64_t ideal_sectors = 0;  // global: the fewest that hold the bytes asked for
  uint64_t wavefronts = 0;     // shared: passes through the 32 banks
  uint64_t ideal_wavefronts = 0;
  unsigned worst_wavefronts = 0;  // shared: the worst single request
};

// One warp-level access in full, for the visualizer and lessons.
struct WarpAccess {
  uint3 block{};
  unsigned warp = 0;
  const void* pc = nullptr;
  bool write = false;
  Space space = Space::global;
  unsigned bytes = 0;
  unsigned mask = 0;  // lanes that took part
  std::array<uintptr_t, 32> addresses{};
  unsigned sectors = 0, wavefronts = 0;
};

struct KernelTrace {
  std::string kernel;
  LaunchShape shape;
  uint64_t warps = 0;                          // warps launched
  std::vector<InstructionStats> instructions;  // sorted by pc
  std::vector<WarpAccess> samples;             // the first kMaxSamples, in execution order
  static constexpr size_t kMaxSamples = 256;
  // TMA boxes (src/simt/hopper.hpp): global -> shared by the copy engine, not
  // by the kernel's instructions, so in no InstructionStats above.
  uint64_t bulk_copies = 0, bulk_bytes = 0, bulk_largest = 0;  // copies, their bytes, the largest copy's
  // What the memory requests above leave out, summed over the blocks that
  // ran (`blocks`, every launch added): the __syncthreads() (and cluster
  // barriers) each released, the warp-level shuffles, votes, reductions and
  // matches its warps executed, and its lanes' atomic operations (global or
  // shared, one per lane: on a GPU those on one address take turns).
  uint64_t blocks = 0, barriers = 0, warp_collectives = 0, atomics = 0;

  // Sums over instructions of one kind.
  InstructionStats total(Space space, bool write) const;
  // Adds statistics of the same kernel's instructions (more blocks, or
  // another launch): counts summed per pc, samples kept up to kMaxSamples.
  void add(const std::vector<InstructionStats>& stats, const std::vector<WarpAccess>& more_samples);
  void add(const KernelTrace& other);  // another launch of the same kernel: also its warps and TMA copies
  nlohmann::json to_json() const;
};

// The trace of the most recent traced launch on any thread (nullopt before one).
std::optional<KernelTrace> last_trace();

// Every traced launch published while it lives, on any thread, in order:
// for a caller whose one call makes several launches (split-K and its sum,
// im2col and a GEMM), where last_trace() keeps only the latest.
class TraceRecorder {
 public:
  TraceRecorder();
  ~TraceRecorder();
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;
  std::vector<KernelTrace> launches() const;
  // The launches of each kernel added up, in the order of each kernel's
  // first launch; `counts` gets how many launches each one sums.
  std::vector<KernelTrace> by_kernel(std::vector<int>* counts = nullptr) const;

 private:
  friend class TraceSink;
  mutable std::mutex mutex_;
  std::vector<KernelTrace> launches_;
};

// Sectors and wavefronts of one warp-level access (lanes in `mask`).
unsigned sectors_touched(const std::array<uintptr_t, 32>& addresses, unsigned mask, unsigned bytes);
unsigned ideal_sectors(const std::array<uintptr_t, 32>& addresses, unsigned mask, unsigned bytes);
unsigned shared_wavefronts(const std::array<uintptr_t, 32>& addresses, unsigned mask, unsigned bytes);
// The wavefronts the same lanes would take without a bank conflict: what
// the trace's conflict figures (wavefronts over ideal) compare against.
unsigned ideal_shared_wavefronts(unsigned mask, unsigned bytes);

// Collects the blocks' statistics during a launch (workers add concurrently).
class TraceSink {
 public:
  TraceSink(std::string kernel, const LaunchShape& shape);
  void add(const std::vector<InstructionStats>& stats, std::vector<WarpAccess>& samples);
  void add_bulk(uint64_t copies, uint64_t bytes, uint64_t largest);
  void add_block_counts(uint64_t barriers, uint64_t warp_collectives, uint64_t atomics);  // one block's
  bool traced() const { return traced_; }
  void publish();

 private:
  std::mutex mutex_;
  KernelTrace trace_;
  bool traced_ = false;
};

}  // namespace warpnet::simt
