// One thread block in flight: its threads (fibers), the barrier, and the warp
// rendezvous. Internal to src/simt. A Block runs on one OS thread, so nothing
// here is shared between threads: that is what makes __shared__ thread_local.
#pragma once
#include <boost/context/fiber.hpp>
#include <cstdint>
#include <exception>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "simt/device.hpp"
#include "simt/launch.hpp"
#include "simt/trace.hpp"

namespace warpnet::simt {

class StackSet;
class Checker;
class TraceSink;

// at_memory: held by a Stepper before a memory access (see stepper.hpp).
// Where a __syncthreads() is in the source (the call's std::source_location).
struct SourcePlace {
  const char* file = nullptr;
  unsigned line = 0, column = 0;
  static SourcePlace of(const std::source_location& s) { return {s.file_name(), s.line(), s.column()}; }
  bool operator==(const SourcePlace& o) const;
};

enum class LaneState : uint8_t { ready, at_barrier, at_warp_op, at_memory, done };

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

struct Lane {
  boost::context::fiber fiber;      // the emulated thread, while parked
  boost::context::fiber scheduler;  // where the thread returns to when it parks
  uint3 tid{};
  unsigned linear = 0;  // x + y*bx + z*bx*by: the thread's rank in the block
  unsigned lane = 0, warp = 0;
  LaneState state = LaneState::ready;
  const void* site = nullptr;  // return address of the barrier/collective: the instruction
  SourcePlace place;  // at a barrier: which __syncthreads() of the source
  // Parked at a barrier or collective: the operation and this lane's operands.
  BarrierKind barrier = BarrierKind::plain;
  WarpOp op = WarpOp::syncwarp;
  unsigned mask = 0;
  uint64_t value = 0;
  int arg = 0, width = 32;
  uint64_t result = 0;  // what the barrier/collective returns to this lane
  PendingAccess access;  // while at_memory
  // cp.async copies this thread issued and has not yet waited for (async_copy.cpp).
  std::vector<AsyncCopy> async_copies;
  uint32_t async_groups = 0;  // cp.async.commit_group calls so far
  bool started = false;  // the fiber has run; until then it holds no kernel frames
  void* asan_fake_stack = nullptr;  // fiber_sanitizer.hpp; unused outside the asan preset
};

class Block {
 public:
  Block(const KernelCall& call, const LaunchShape& shape, const std::string& kernel_name, StackSet& stacks,
        void* dynamic_shared, TraceSink& sink);
  ~Block();
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  // Runs every thread of block `index` to completion; throws LaunchError.
  void run(uint3 index);

  // Called from a lane's fiber: parks it until the scheduler resumes it.
  void park(Lane& lane);

  uint3 index() const { return index_; }
  const LaunchShape& shape() const { return shape_; }
  void* dynamic_shared() const { return dynamic_shared_; }
  const std::string& kernel_name() const { return kernel_name_; }
  const void* kernel() const { return call_.kernel; }
  unsigned barrier_epoch() const { return barrier_epoch_; }
  unsigned warp_epoch(unsigned warp) const { return warp_epochs_[warp]; }
  unsigned lanes_in_warp(unsigned warp) const;
  Lane& lane(unsigned linear) { return lanes_[linear]; }
  const KernelCall& call() const { return call_; }
  const StackSet& stacks() const { return stacks_; }

  // A traced kernel's checker, made at its first traced access on this worker
  // and kept for the worker's later blocks; null while nothing was traced.
  Checker& checker();
  Checker* checker_if_traced() { return checker_.get(); }

  // "kernel sgemm, block (1,0,0), thread (3,2,0)": the prefix of every error.
  std::string where(const Lane& lane) const;
  std::string where() const;

 private:
  void start_lanes();
  void resume(Lane& lane);
  void run_warp(unsigned warp);
  bool resolve_warp_ops(unsigned warp);
  bool resolve_masked_group(unsigned warp, Lane& first);
  void resolve_activemask(unsigned warp);
  void run_matrix_op(unsigned warp, const Lane& first);
  void release_barrier();
  [[noreturn]] void deadlock();
  void destroy_fibers();
  size_t stack_bytes(const Lane& lane) const;  // the lane's fiber stack

  const KernelCall& call_;
  LaunchShape shape_;
  std::string kernel_name_;
  StackSet& stacks_;
  // The scheduler's stack, as AddressSanitizer reports it when a fiber starts
  // (fiber_sanitizer.hpp); unused outside the asan preset.
  bool tearing_down_ = false;  // destroy_fibers: fibers that never ran return at once
  const void* scheduler_stack_ = nullptr;
  size_t scheduler_stack_size_ = 0;
  void* dynamic_shared_;
  uint3 index_{};
  std::vector<Lane> lanes_;
  std::vector<unsigned> warp_epochs_;  // __syncwarp generations, for the race checker
  unsigned warps_ = 0;
  unsigned done_ = 0;
  unsigned barrier_epoch_ = 0;  // __syncthreads generations, for the race checker
  std::exception_ptr error_;    // thrown inside a fiber, rethrown by run()
  TraceSink& sink_;
  std::unique_ptr<Checker> checker_;
};

// The lane running now on this OS thread (null outside kernels) and its block.
extern thread_local Lane* current_lane;
extern thread_local Block* current_block;

// The current lane, or an error if a device builtin is called from host code.
Lane& this_lane(const char* builtin);

std::string format_dim(uint3 v);

}  // namespace warpnet::simt
