// One thread block in flight: its threads (fibers), the barrier, and the warp
// rendezvous. Internal to src/simt. A Block runs on one OS thread, so nothing
// here is shared between threads: that is what makes __shared__ thread_local.
#pragma once
#include <array>
#include <atomic>
#include <boost/context/fiber.hpp>
#include <cstdint>
#include <exception>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "simt/device.hpp"
#include "simt/hopper_units.hpp"
#include "simt/launch.hpp"
#include "simt/trace.hpp"

namespace warpnet::simt {

class StackSet;
class Checker;
class Cluster;
class GridShadow;
class TraceSink;

// at_memory: held by a Stepper before a memory access (see stepper.hpp).
// Where a __syncthreads() is in the source (the call's std::source_location).
struct SourcePlace {
  const char* file = nullptr;
  unsigned line = 0, column = 0;
  static SourcePlace of(const std::source_location& s) { return {s.file_name(), s.line(), s.column()}; }
  bool operator==(const SourcePlace& o) const;
};

// at_mbarrier: waiting on an mbarrier phase; yielded: past a yielding warp op
// (WarpMatrixOp::yields), until the scheduler's next round (HopperUnits::settle);
// at_cluster_barrier: in cluster_sync(), until every thread of the cluster is (cluster.hpp);
// sleeping: in __nanosleep(), until a round in which nothing else could go on.
enum class LaneState : uint8_t {
  ready, at_barrier, at_warp_op, at_memory, at_mbarrier, yielded, at_cluster_barrier, sleeping, done
};

// The access a lane held at_memory is about to make.
struct PendingAccess {
  const void* pc = nullptr;
  uintptr_t address = 0;
  unsigned bytes = 0;
  bool write = false;
  Space space = Space::global;
  const std::string* variable = nullptr;  // shared: the __shared__ variable's name
};

enum class BarrierKind : uint8_t { plain, count, all, any };

const char* warp_op_name(WarpOp op);

// What a switch and a barrier touch comes first, in one cache line: a
// 1024-thread block's lanes do not fit in L1, and each lane passing a barrier
// reads its own line and the next lane's.
struct alignas(64) Lane {
  boost::context::fiber fiber;  // the emulated thread, while parked
  unsigned linear = 0;  // x + y*bx + z*bx*by: the thread's rank in the block
  unsigned lane = 0, warp = 0;
  LaneState state = LaneState::ready;
  // Parked at a barrier or collective: the operation and this lane's operands.
  BarrierKind barrier = BarrierKind::plain;
  const void* site = nullptr;  // return address of the barrier/collective: the instruction
  SourcePlace place;  // at a barrier: which __syncthreads() of the source
  uint64_t value = 0;
  uint3 tid{};
  WarpOp op = WarpOp::syncwarp;
  unsigned mask = 0;
  int arg = 0, width = 32;
  uint64_t result = 0;  // what the collective returns to this lane
  uint64_t* mbarrier = nullptr;  // at_mbarrier: the barrier it waits on (the parity is in `value`)
  uint32_t mbarrier_phase = 0;   // at_mbarrier: the phase it waits for (its arrivals are what the wait acquires)
  PendingAccess access;  // while at_memory
  // cp.async copies this thread issued and has not yet waited for (async_copy.cpp).
  std::vector<AsyncCopy> async_copies;
  uint32_t async_groups = 0;  // cp.async.commit_group calls so far
  bool started = false;  // the fiber has run; until then it holds no kernel frames
  // Parked by __nanosleep() and not yet back in the kernel: switches to and
  // from it are not progress, which the watchdog counts (a spin-wait that
  // sleeps and never ends is still a hang).
  bool slept = false;
  bool waited_for_prior_grids = false;  // wait_for_prior_grids() called (LaunchShape::programmatic)
  void* asan_fake_stack = nullptr;  // fiber_sanitizer.hpp; unused outside the asan preset
};

class Block {
 public:
  Block(const KernelCall& call, const LaunchShape& shape, const std::string& kernel_name, StackSet& stacks,
        void* dynamic_shared, TraceSink& sink, GridShadow& grid_shadow);
  ~Block();
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  // Runs every thread of block `index` to completion; throws LaunchError.
  void run(uint3 index);

  // The same in steps, for a cluster's CTAs, which take turns on one worker
  // (cluster.hpp): begin(), then round() until it says done, then end().
  // A round runs every ready lane, then lets the copy engine work or releases
  // a complete __syncthreads(); `stuck` when nothing could run and nothing
  // was released (the block waits for a peer, or for ever: the cluster decides).
  enum class Round : uint8_t { done, progressed, stuck };
  void begin(uint3 index);
  Round round();
  void end();
  // After an error elsewhere in the cluster: unwind the lanes mid-kernel.
  void abandon();
  // Nothing can ever run again: throws the LaunchError that says why.
  [[noreturn]] void fail_stuck() { barrier_failure(); }
  // The same, naming a thread that waits on an mbarrier phase, if one does (in
  // a stuck cluster, the likelier cause than a thread waiting in cluster_sync()).
  void fail_if_waiting_on_mbarrier();
  // One CTA of a cluster (rank: %cluster_ctarank); null and 0 outside clusters.
  void join_cluster(Cluster* cluster, unsigned rank) { cluster_ = cluster, cluster_rank_ = rank; }
  Cluster* cluster() const { return cluster_; }
  unsigned cluster_rank() const { return cluster_rank_; }
  // Every lane has exited (set by end()): peers may no longer touch its shared memory.
  bool finished() const { return finished_; }
  // The cluster barrier every thread of the cluster reached: all this block's
  // lanes go on, as after a __syncthreads() (a new phase for the race checker).
  void release_cluster_barrier();

  // Called from a lane's fiber with its barrier, predicate (value), site and
  // place set: parks it at that __syncthreads() (counted here, so releasing the
  // barrier need not look at every lane); returns the barrier's result once it
  // is released.
  int arrive(Lane& lane);
  // Called from a lane's fiber: parks it until it is resumed.
  void park(Lane& lane);
  // Called from a lane's fiber in __nanosleep(): parks it until a round in
  // which no other lane could run and no barrier or copy completed (a GPU
  // runs other warps while one sleeps; so does this).
  void sleep(Lane& lane);

  uint3 index() const { return index_; }
  const LaunchShape& shape() const { return shape_; }
  void* dynamic_shared() const { return dynamic_shared_; }
  const std::string& kernel_name() const { return kernel_name_; }
  const void* kernel() const { return call_.kernel; }
  unsigned barrier_epoch() const { return barrier_epoch_; }
  void count_atomic() { ++atomics_; }  // a lane's atomic operation, for the trace
  // The race checker's view of __syncwarp, as vector clocks over a warp's
  // lanes: lane_clock is the lane's own count of the syncs it passed (a
  // __syncwarp(mask), or a .sync.aligned matrix instruction over the whole
  // warp) and of its mbarrier arrives; an access made when lane a's clock
  // read `stamp` is ordered before lane b's next one when a chain of syncs
  // leads from a, after the access, to b (lane 1 syncing with lane 2, then
  // lane 0 with lane 1, orders lane 2's earlier accesses before lane 0's
  // later ones). Other lanes learn a clock only at syncs, so an arrive's
  // tick orders nothing within the warp by itself.
  unsigned lane_clock(unsigned warp, unsigned lane) const { return warp_clocks_[warp][lane][lane]; }
  bool warp_ordered(unsigned warp, unsigned earlier_lane, unsigned stamp, unsigned later_lane) const {
    return warp_clocks_[warp][later_lane][earlier_lane] > stamp;
  }
  // An mbarrier arrive (Checker::mbarrier_release): the lane's accesses so far
  // come before it, its later ones after.
  void tick_lane_clock(unsigned warp, unsigned lane) { ++warp_clocks_[warp][lane][lane]; }
  // What the lane knows of its warp's clocks, its own included.
  const std::array<uint32_t, 32>& lane_knows(unsigned warp, unsigned lane) const { return warp_clocks_[warp][lane]; }
  unsigned lanes_in_warp(unsigned warp) const;
  Lane& lane(unsigned linear) { return lanes_[linear]; }
  const Lane& lane(unsigned linear) const { return lanes_[linear]; }
  const KernelCall& call() const { return call_; }
  unsigned lane_count() const { return unsigned(lanes_.size()); }
  HopperUnits& hopper() { return hopper_; }
  const StackSet& stacks() const { return stacks_; }

  // A traced kernel's checker, made at its first traced access on this worker
  // and kept for the worker's later blocks; null while nothing was traced.
  Checker& checker();
  Checker* checker_if_traced() { return checker_.get(); }
  // Which blocks of this launch touched each global byte (the traced build).
  GridShadow& grid_shadow() { return grid_shadow_; }
  // A thread of this block made a __threadfence(): the check between blocks
  // leaves the block's later accesses alone (Checker::check_between_blocks).
  void fence() { fenced_ = true; }
  bool fenced() const { return fenced_; }

  // "kernel sgemm, block (1,0,0), thread (3,2,0)": the prefix of every error.
  std::string where(const Lane& lane) const;
  std::string where() const;

 private:
  void start_lanes();
  void resume(Lane& lane);
  void enter_from_scheduler(Lane& lane);
  Lane* next_ready(const Lane& lane);
  void switch_away(Lane& lane, Lane* next);
  bool wake_sleepers();
  void run_warp(unsigned warp);
  bool resolve_warp_ops(unsigned warp);
  bool resolve_masked_group(unsigned warp, Lane& first);
  void resolve_activemask(unsigned warp);
  void run_matrix_op(unsigned warp, const Lane& first);
  void release_barrier();
  [[noreturn]] void barrier_failure();
  [[noreturn]] void mbarrier_deadlock(const Lane& lane);
  [[noreturn]] void deadlock();
  void destroy_fibers();
  size_t stack_bytes(const Lane& lane) const;  // the lane's fiber stack

  const KernelCall& call_;
  LaunchShape shape_;
  std::string kernel_name_;
  StackSet& stacks_;
  // A lane that parks or exits switches straight to the next ready lane of its
  // warp, in the order the scheduler would resume them (one switch per lane,
  // not two); the last one switches back to the scheduler. Whoever switches
  // leaves in `resumer_` where its own continuation is to be kept (its lane's
  // fiber, or scheduler_), and the side that lands puts it there.
  boost::context::fiber scheduler_;
  boost::context::fiber* resumer_ = nullptr;
  bool tearing_down_ = false;  // destroy_fibers: fibers that never ran return at once
  // The scheduler's stack, as AddressSanitizer reports it when a fiber starts
  // (fiber_sanitizer.hpp); unused outside the asan preset.
  const void* scheduler_stack_ = nullptr;
  size_t scheduler_stack_size_ = 0;
  void* dynamic_shared_;
  // The kernel's static __shared__ variables on this worker thread (its
  // `static thread_local`s), poisoned at each block's start like the dynamic ones.
  std::vector<std::pair<char*, size_t>> static_shared_;
  uint3 index_{};
  std::vector<Lane> lanes_;
  // Per warp, per lane, what the lane knows of every lane's clock (lane_clock).
  using LaneClocks = std::array<std::array<uint32_t, 32>, 32>;
  std::vector<LaneClocks> warp_clocks_;
  void warp_sync(unsigned warp, uint32_t mask);
  unsigned warps_ = 0;
  unsigned done_ = 0;
  unsigned barrier_epoch_ = 0;  // __syncthreads generations, for the race checker
  uint64_t warp_collectives_ = 0;  // shuffles, votes, reductions, matches resolved (a warp's one each), for the trace
  uint64_t atomics_ = 0;           // lanes' atomic operations, for the trace
  // This phase's arrivals at __syncthreads(): how many, how many with a true
  // predicate, where the first waits, and whether any waits elsewhere.
  unsigned arrived_ = 0, votes_ = 0;
  SourcePlace barrier_place_;
  BarrierKind barrier_kind_ = BarrierKind::plain;
  bool diverged_ = false;
  int barrier_result_ = 0;  // what the last released barrier returns
  std::exception_ptr error_;    // thrown inside a fiber, rethrown by run()
  TraceSink& sink_;
  GridShadow& grid_shadow_;
  bool fenced_ = false;
  bool finished_ = false;
  Cluster* cluster_ = nullptr;
  unsigned cluster_rank_ = 0;
  // This worker thread's count of thread switches and ends, which the
  // watchdog reads (a launch that makes none for a long time is stuck:
  // watchdog.hpp). This thread alone writes it: no locked add.
  std::atomic<uint64_t>& switches_;
  void count_switch() { switches_.store(switches_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
  std::unique_ptr<Checker> checker_;
  HopperUnits hopper_;  // mbarriers, TMA copies, wgmma queues (hopper.hpp)
};

// The lane running now on this OS thread (null outside kernels) and its block.
extern thread_local Lane* current_lane;
extern thread_local Block* current_block;

// The current lane, or an error if a device builtin is called from host code.
Lane& this_lane(const char* builtin);

std::string format_dim(uint3 v);

// A block's index in its grid from its linear number (x fastest: the order
// blocks are handed to workers, grid.cpp), and back.
uint3 block_index(uint64_t linear, dim3 grid);
uint64_t block_linear(uint3 index, dim3 grid);

}  // namespace warpnet::simt
