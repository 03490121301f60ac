// The device builtins kernels call: indices, barriers, collectives. Each runs
// on the calling lane's fiber and parks it when it must wait for others.
#include <atomic>
#include <chrono>

#include "simt/block.hpp"
#include "simt/device.hpp"
#include "simt/symbols.hpp"
#include "simt/trace_hooks.hpp"

namespace warpnet::simt {

Lane& this_lane(const char* builtin) {
  Lane* lane = current_lane;
  if (!lane) fail(builtin, " called outside a kernel: device builtins work only in code the emulator launches");
  return *lane;
}

uint3 thread_idx() { return this_lane("threadIdx").tid; }

void wait_for_prior_grids() { this_lane("griddepcontrol.wait").waited_for_prior_grids = true; }
uint3 block_idx() {
  this_lane("blockIdx");
  return current_block->index();
}
dim3 block_dim() {
  this_lane("blockDim");
  return current_block->shape().block;
}
dim3 grid_dim() {
  this_lane("gridDim");
  return current_block->shape().grid;
}
void* dynamic_shared_memory() {
  this_lane("dynamic shared memory");
  return current_block->dynamic_shared();
}

namespace {

// No LibraryScope: the access callbacks ignore code that runs where no lane
// does (this_lane's error), and arrive() parks: the next lane to run on this
// OS thread is kernel code again. arrive() is the last call, and a tail call:
// a parked lane resumes with one return to the kernel, not two (returns after
// a fiber switch are mispredicted, and they are most of a barrier's cost).
int barrier(BarrierKind kind, int predicate, const void* site, SourcePlace place) {
  Lane& lane = this_lane("__syncthreads");
  lane.barrier = kind;
  lane.value = predicate != 0;
  lane.site = site;
  lane.place = place;
  return current_block->arrive(lane);
}

uint64_t collective(WarpOp op, unsigned mask, uint64_t value, int arg, int width, const void* site) {
  Lane* lane;
  {
    LibraryScope scope;
    lane = &this_lane(warp_op_name(op));
    const Block& block = *current_block;
    if (op != WarpOp::activemask && !(mask >> lane->lane & 1)) {
      throw LaunchError(cudaErrorLaunchFailure,
                        cat(block.where(*lane), ": ", warp_op_name(op), " with mask 0x", std::hex, mask, std::dec,
                            " leaves out the calling lane ", lane->lane, " (on a GPU: undefined behaviour)"));
    }
    if (width < 1 || width > 32 || (width & (width - 1)) != 0) {
      throw LaunchError(cudaErrorLaunchFailure, cat(block.where(*lane), ": ", warp_op_name(op), " width ", width,
                                                    " is not a power of two in [1, 32]"));
    }
    lane->state = LaneState::at_warp_op;
    lane->op = op;
    lane->mask = mask;
    lane->value = value;
    lane->arg = arg;
    lane->width = width;
    lane->site = site;
  }
  current_block->park(*lane);
  return lane->result;
}

}  // namespace

uint64_t warp_collective(WarpOp op, unsigned mask, uint64_t value, int arg, int width) {
  return collective(op, mask, value, arg, width, __builtin_return_address(0));
}

void warp_matrix_op(const WarpMatrixOp& op) {
  collective(WarpOp::matrix, ~0u, reinterpret_cast<uintptr_t>(&op), 0, 32, __builtin_return_address(0));
}

unsigned lane_id() { return this_lane("%laneid").lane; }

void device_misuse(const char* instruction, const char* why, const void* address) {
  LibraryScope scope;
  const Lane& lane = this_lane(instruction);
  throw LaunchError(cudaErrorLaunchFailure, cat(current_block->where(lane), ": ", instruction, " at ",
                                                describe_code(__builtin_return_address(0)), ": ", why, " (address ",
                                                address, "; on a GPU: undefined behaviour or a misaligned-address error)"));
}

void misaligned_access_at(const char* instruction, const void* pc, const void* address, unsigned bytes) {
  LibraryScope scope;
  const Lane& lane = this_lane(instruction);
  throw LaunchError(cudaErrorMisalignedAddress, cat(current_block->where(lane), ": ", instruction, " at ",
                                                    describe_code(pc), ": a ", bytes, "-byte access at ", address,
                                                    ", not ", bytes, "-byte aligned"));
}

void misaligned_access(const char* instruction, const void* address, unsigned bytes) {
  misaligned_access_at(instruction, __builtin_return_address(0), address, bytes);
}

}  // namespace warpnet::simt

using warpnet::simt::BarrierKind;
using warpnet::simt::SourcePlace;

// Barriers reached from different places in the source are told apart by the
// caller's file, line and column (device.hpp's default argument), which stay
// the same when the compiler duplicates the call; __builtin_return_address(0),
// the call instruction, names it in messages.
void __syncthreads(std::source_location place) {
  warpnet::simt::barrier(BarrierKind::plain, 0, __builtin_return_address(0), SourcePlace::of(place));
}
int __syncthreads_count(int p, std::source_location place) {
  return warpnet::simt::barrier(BarrierKind::count, p, __builtin_return_address(0), SourcePlace::of(place));
}
int __syncthreads_and(int p, std::source_location place) {
  return warpnet::simt::barrier(BarrierKind::all, p, __builtin_return_address(0), SourcePlace::of(place));
}
int __syncthreads_or(int p, std::source_location place) {
  return warpnet::simt::barrier(BarrierKind::any, p, __builtin_return_address(0), SourcePlace::of(place));
}

// Blocks on different workers share memory through real threads; lanes of one
// block run on one OS thread and need no fence between them.
void __threadfence() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // The block may now order itself through a flag: its check against other blocks stops (grid_shadow.hpp).
  if (warpnet::simt::Block* block = warpnet::simt::current_block) block->fence();
}
void __threadfence_block() {}
// The host's memory is not shared with a running kernel here (no mapped or
// managed memory), so a fence for the system orders what __threadfence() does.
void __threadfence_system() { __threadfence(); }

// The thread sleeps until the rest of its block has gone as far as it can
// (Block::sleep); `ns` is not waited: the emulator's time is not the GPU's.
// A spin-wait with a __nanosleep() in its loop therefore lets the threads
// it waits for run, as on a GPU.
void __nanosleep(unsigned ns) {
  (void)ns;
  warpnet::simt::Lane& lane = warpnet::simt::this_lane("__nanosleep");
  lane.site = __builtin_return_address(0);
  warpnet::simt::current_block->sleep(lane);
}

// A host clock, in nanoseconds since an arbitrary start, for a GPU's count of
// SM cycles: it only increases, and differences measure the emulation's own
// time, not the GPU's (a load costs here what the host's costs).
long long int clock64() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

unsigned __activemask() {
  return unsigned(warpnet::simt::collective(warpnet::simt::WarpOp::activemask, 0, 0, 0, 32,
                                            __builtin_return_address(0)));
}
