// The block scheduler. A phase runs every ready lane, warp by warp, until it
// parks (barrier or warp collective) or exits; complete warp collectives are
// resolved as soon as their lanes are all parked; when no lane can run, the
// block barrier is released, or nothing ever can and that is reported.
#include "simt/block.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <typeinfo>

#include <boost/context/detail/exception.hpp>

#include "simt/checker.hpp"
#include "simt/cluster.hpp"
#include "simt/fiber_sanitizer.hpp"
#include "simt/stacks.hpp"
#include "simt/stepper.hpp"
#include "simt/symbols.hpp"
#include "simt/trace_hooks.hpp"
#include "simt/watchdog.hpp"

namespace warpnet::simt {

namespace ctx = boost::context;

// One kernel's calls share their file's string (one literal per translation
// unit); two translation units' copies of an inline kernel may not.
bool SourcePlace::operator==(const SourcePlace& o) const {
  return line == o.line && column == o.column &&
         (file == o.file || (file && o.file && std::strcmp(file, o.file) == 0));
}

thread_local Lane* current_lane = nullptr;
thread_local Block* current_block = nullptr;

namespace {

// The StackSet owns the stacks, so a finished fiber gives nothing back.
struct KeepStack {
  ctx::stack_context allocate() = delete;
  void deallocate(ctx::stack_context&) noexcept {}
};

// The demangled name of an exception's type ("std::runtime_error"), or "an
// exception of unknown type" where the runtime gives none.
std::string exception_type(const std::type_info* type) {
  if (!type) return "an exception of unknown type";
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type->name(), nullptr, nullptr, &status),
                                                    std::free);
  return status == 0 && name ? name.get() : type->name();
}

}  // namespace

std::string format_dim(uint3 v) { return cat("(", v.x, ",", v.y, ",", v.z, ")"); }

Block::Block(const KernelCall& call, const LaunchShape& shape, const std::string& kernel_name, StackSet& stacks,
             void* dynamic_shared, TraceSink& sink, GridShadow& grid_shadow)
    : call_(call),
      shape_(shape),
      kernel_name_(kernel_name),
      stacks_(stacks),
      dynamic_shared_(dynamic_shared),
      sink_(sink),
      grid_shadow_(grid_shadow),
      switches_(watchdog::switches_of_this_thread()) {
  const dim3 b = shape.block;
  const unsigned n = b.x * b.y * b.z;
  lanes_.resize(n);
  warps_ = (n + 31) / 32;
  warp_clocks_.assign(warps_, LaneClocks{});
  if (const TlsBlock tls = this_thread_tls(); tls.begin)  // a stripped executable cannot find them
    for (const SharedVariable& var : kernel_shared_variables(call.kernel))
      static_shared_.emplace_back(tls.begin + var.offset, var.bytes);
  stacks_.reserve(n);
  for (unsigned i = 0; i < n; ++i) {
    Lane& lane = lanes_[i];
    lane.tid = {i % b.x, (i / b.x) % b.y, i / (b.x * b.y)};
    lane.linear = i;
    lane.lane = i % 32;
    lane.warp = i / 32;
  }
}

Block::~Block() { destroy_fibers(); }

Checker& Block::checker() {
  if (!checker_) checker_ = std::make_unique<Checker>(*this, sink_);
  return *checker_;
}

unsigned Block::lanes_in_warp(unsigned warp) const {
  const unsigned left = unsigned(lanes_.size()) - warp * 32;
  return left < 32 ? left : 32;
}

void Block::warp_sync(unsigned warp, uint32_t mask) {
  if (!checker_) return;  // only the race checker reads the clocks: untraced launches skip the work
  // Each lane in the mask ticks its own clock (its accesses so far are now
  // "before the sync"), then all of them learn the latest of every clock any
  // of them knows.
  LaneClocks& v = warp_clocks_[warp];
  const unsigned count = lanes_in_warp(warp);
  std::array<uint32_t, 32> joined{};
  for (unsigned l = 0; l < count; ++l) {
    if (!(mask >> l & 1)) continue;
    ++v[l][l];
    for (unsigned j = 0; j < 32; ++j) joined[j] = std::max(joined[j], v[l][j]);
  }
  for (unsigned l = 0; l < count; ++l)
    if (mask >> l & 1) v[l] = joined;
  checker_->warp_synced(warp, mask);  // and what their mbarrier waits acquired
}

std::string Block::where() const { return cat("kernel ", kernel_name_, ", block ", format_dim(index_)); }
std::string Block::where(const Lane& lane) const { return cat(where(), ", thread ", format_dim(lane.tid)); }

void Block::start_lanes() {
  for (Lane& lane : lanes_) {
    lane.state = LaneState::ready;
    lane.async_copies.clear();
    lane.async_groups = 0;
    lane.started = false;
    lane.waited_for_prior_grids = false;
    ctx::stack_context stack;
    stack.sp = stacks_.top(lane.linear);
    stack.size = size_t(static_cast<char*>(stack.sp) - stacks_.bottom(lane.linear));
    asan_unpoison(stacks_.bottom(lane.linear), stack.size);
    lane.fiber = ctx::fiber(std::allocator_arg, ctx::preallocated(stack.sp, stack.size, stack), KeepStack{},
                            [this, &lane](ctx::fiber&& resumer) {
                              const bool from_scheduler = resumer_ == &scheduler_;
                              asan_finish_switch(nullptr, from_scheduler ? &scheduler_stack_ : nullptr,
                                                 from_scheduler ? &scheduler_stack_size_ : nullptr);
                              *resumer_ = std::move(resumer);
                              lane.started = true;
                              try {
                                if (!tearing_down_) call_.invoke(call_.bound);
                              } catch (const ctx::detail::forced_unwind&) {
                                // The block is being torn down: Boost unwinds this
                                // stack and switches back to the destroyer.
                                asan_start_switch(nullptr, scheduler_stack_, scheduler_stack_size_);
                                throw;
                              } catch (const Error&) {  // the emulator's own, which name the lane already
                                if (!error_) error_ = std::current_exception();
                              } catch (const std::exception& e) {
                                // The kernel's own C++ exception (a GPU has none): an error
                                // naming where, not std::terminate with no word of the launch.
                                // (Its message is the emulator's work, not the kernel's accesses.)
                                const LibraryScope scope;
                                if (!error_)
                                  error_ = std::make_exception_ptr(LaunchError(
                                      cudaErrorLaunchFailure,
                                      cat(where(lane), ": the kernel threw ", exception_type(&typeid(e)), ": ",
                                          e.what(), " (device code cannot throw on a GPU)")));
                              } catch (...) {
                                const LibraryScope scope;
                                if (!error_)
                                  error_ = std::make_exception_ptr(LaunchError(
                                      cudaErrorLaunchFailure,
                                      cat(where(lane), ": the kernel threw ", exception_type(abi::__cxa_current_exception_type()),
                                          " (device code cannot throw on a GPU)")));
                              }
                              lane.state = LaneState::done;
                              ++done_;
                              count_switch();  // an end is progress too (the watchdog's)
                              // An error goes straight to the scheduler, which rethrows it.
                              Lane* next = error_ || tearing_down_ ? nullptr : next_ready(lane);
                              if (next)
                                asan_start_switch(nullptr, stacks_.bottom(next->linear), stack_bytes(*next));
                              else
                                asan_start_switch(nullptr, scheduler_stack_, scheduler_stack_size_);
                              current_lane = next;
                              resumer_ = &lane.fiber;  // lands empty: this fiber has ended
                              return std::move(next ? next->fiber : scheduler_);
                            });
  }
}

void Block::destroy_fibers() {
  // Destroying a parked fiber unwinds its stack: Boost throws forced_unwind in
  // it. A fiber that never ran is resumed instead and returns at once, so that
  // every switch passes through code that tells AddressSanitizer about it
  // (Boost's own unwinding of an unstarted fiber would not).
  tearing_down_ = true;
  for (Lane& lane : lanes_) {
    if (!lane.fiber) continue;
    if (lane.started) {
      void* fake_stack = nullptr;
      asan_start_switch(&fake_stack, stacks_.bottom(lane.linear), stack_bytes(lane));
      lane.fiber = {};
      asan_finish_switch(fake_stack, nullptr, nullptr);
    } else {
      enter_from_scheduler(lane);
    }
  }
  current_lane = nullptr;
  tearing_down_ = false;
}

size_t Block::stack_bytes(const Lane& lane) const {
  return size_t(static_cast<char*>(stacks_.top(lane.linear)) - stacks_.bottom(lane.linear));
}

// The scheduler's side of a switch: runs `lane` and every ready lane after it
// in its warp, until one of them switches back.
void Block::enter_from_scheduler(Lane& lane) {
  current_lane = &lane;
  void* fake_stack = nullptr;
  asan_start_switch(&fake_stack, stacks_.bottom(lane.linear), stack_bytes(lane));
  resumer_ = &scheduler_;
  ctx::fiber back = std::move(lane.fiber).resume();
  asan_finish_switch(fake_stack, nullptr, nullptr);
  *resumer_ = std::move(back);
}

void Block::resume(Lane& lane) {
  if (!lane.slept) count_switch();
  enter_from_scheduler(lane);
  current_lane = nullptr;
  if (error_) std::rethrow_exception(error_);
}

// The ready lane the scheduler's pass over this warp would resume after `lane`.
Lane* Block::next_ready(const Lane& lane) {
  const unsigned end = lane.warp * 32 + lanes_in_warp(lane.warp);
  for (unsigned i = lane.linear + 1; i < end; ++i)
    if (lanes_[i].state == LaneState::ready) return &lanes_[i];
  return nullptr;
}

void Block::park(Lane& lane) { switch_away(lane, next_ready(lane)); }

void Block::sleep(Lane& lane) {
  lane.state = LaneState::sleeping;
  lane.slept = true;
  switch_away(lane, next_ready(lane));
  lane.slept = false;  // back in the kernel: whatever it does next is progress again
}

bool Block::wake_sleepers() {
  bool woke = false;
  for (Lane& lane : lanes_)
    if (lane.state == LaneState::sleeping) lane.state = LaneState::ready, woke = true;
  return woke;
}

// A lane's side of a switch: to `next`, or to the scheduler when null.
void Block::switch_away(Lane& lane, Lane* next) {
  if (next)
    asan_start_switch(&lane.asan_fake_stack, stacks_.bottom(next->linear), stack_bytes(*next));
  else
    asan_start_switch(&lane.asan_fake_stack, scheduler_stack_, scheduler_stack_size_);
  // Finished on every way back: a normal resume, and the forced_unwind that
  // resume() throws when the block is torn down.
  struct FinishSwitch {
    Lane& lane;
    ~FinishSwitch() { asan_finish_switch(lane.asan_fake_stack, nullptr, nullptr); }
  } finish{lane};
  if (!lane.slept) count_switch();
  current_lane = next;
  resumer_ = &lane.fiber;
  ctx::fiber back = std::move(next ? next->fiber : scheduler_).resume();
  *resumer_ = std::move(back);
}

int Block::arrive(Lane& lane) {
  lane.state = LaneState::at_barrier;
  if (arrived_++ == 0) {
    barrier_place_ = lane.place;
    barrier_kind_ = lane.barrier;
  } else if (!(lane.place == barrier_place_) || lane.barrier != barrier_kind_) {
    diverged_ = true;
  }
  votes_ += lane.value != 0;
  park(lane);
  return barrier_result_;
}

void Block::run(uint3 index) {
  begin(index);
  for (;;) {
    const Round r = round();
    if (r == Round::done) break;
    if (r == Round::stuck) {
      try {
        fail_stuck();  // reads the lanes as they stopped, before unwinding them
      } catch (...) {
        abandon();
        throw;
      }
    }
  }
  end();
}

void Block::begin(uint3 index) {
  index_ = index;
  done_ = 0;
  barrier_epoch_ = 0;
  warp_collectives_ = 0;
  atomics_ = 0;
  arrived_ = votes_ = 0;
  diverged_ = false;
  fenced_ = false;
  finished_ = false;
  if (checker_) std::fill(warp_clocks_.begin(), warp_clocks_.end(), LaneClocks{});
  error_ = nullptr;
  current_block = this;
  // A block's shared memory holds whatever the last block left (on a GPU,
  // whatever was there): poisoned, a kernel that reads it before writing
  // sees NaNs, not the zeros of a fresh mapping or the last block's values.
  // (The traced build also names such a read.)
  if (shape_.dynamic_shared > 0) std::memset(dynamic_shared_, 0xff, shape_.dynamic_shared);
  for (auto [begin, bytes] : static_shared_) std::memset(begin, 0xff, bytes);
  if (checker_) checker_->start_block();
  hopper_.start(warps_);
  try {
    start_lanes();
  } catch (...) {
    abandon();
    throw;
  }
  current_block = nullptr;
}

Block::Round Block::round() {
  current_block = this;
  try {
    for (unsigned w = 0; w < warps_; ++w) run_warp(w);
    if (done_ == lanes_.size()) return Round::done;
    if (hopper_.settle(*this)) return Round::progressed;  // TMA copies landed, mbarrier phases completed
    if (wake_sleepers()) return Round::progressed;        // threads back from __nanosleep()
    // No lane can run: every one waits at the same __syncthreads(), or the
    // block is stuck (alone: for ever; in a cluster, perhaps until a peer acts).
    if (arrived_ != lanes_.size() || diverged_) return Round::stuck;
    release_barrier();
  } catch (...) {
    abandon();
    throw;
  }
  current_block = nullptr;
  return Round::progressed;
}

void Block::end() {
  current_block = this;
  try {
    hopper_.finish(*this);
  } catch (...) {
    current_block = nullptr;
    throw;
  }
  finished_ = true;
  if (checker_) checker_->end_block();
  // Also from a block with no traced access of its own (a cluster's CTA
  // whose tile lies past the matrix still copies); published only if the launch was traced.
  if (hopper_.copies_made) sink_.add_bulk(hopper_.copies_made, hopper_.bytes_copied, hopper_.largest_copy);
  if (checker_) sink_.add_block_counts(barrier_epoch_, warp_collectives_, atomics_);
  current_block = nullptr;
}

void Block::abandon() {
  current_block = this;
  destroy_fibers();
  current_block = nullptr;
}

void Block::release_cluster_barrier() {
  for (Lane& lane : lanes_)
    if (lane.state == LaneState::at_cluster_barrier) lane.state = LaneState::ready;
  if (checker_) checker_->end_phase();
  ++barrier_epoch_;
}

void Block::run_warp(unsigned warp) {
  const unsigned begin = warp * 32, end = begin + lanes_in_warp(warp);
  Stepper* stepper = active_stepper();
  for (;;) {
    // The first ready lane runs the others in turn (switch_away).
    for (unsigned i = begin; i < end; ++i)
      if (lanes_[i].state == LaneState::ready) {
        resume(lanes_[i]);
        break;
      }
    // A stepped warp shows its stop before collectives resolve: a lane held
    // at a memory access could still join one.
    if (stepper && stepper->pause(*this, warp)) continue;
    if (!resolve_warp_ops(warp)) return;
  }
}

void Block::release_barrier() {
  switch (barrier_kind_) {
    case BarrierKind::plain: barrier_result_ = 0; break;
    case BarrierKind::count: barrier_result_ = votes_; break;
    case BarrierKind::all: barrier_result_ = votes_ == lanes_.size(); break;
    case BarrierKind::any: barrier_result_ = votes_ != 0; break;
  }
  for (Lane& lane : lanes_) lane.state = LaneState::ready;
  arrived_ = votes_ = 0;
  if (checker_) checker_->end_phase();  // before the epoch moves: requests of this phase are complete
  ++barrier_epoch_;
}

void Block::mbarrier_deadlock(const Lane& lane) {
  throw LaunchError(cudaErrorLaunchTimeout, cat(where(lane), ": deadlock: this thread ",
                                                hopper_.describe_wait(*this, lane), " (on a GPU: a hang)"));
}

void Block::fail_if_waiting_on_mbarrier() {
  for (const Lane& lane : lanes_)
    if (lane.state == LaneState::at_mbarrier) mbarrier_deadlock(lane);
}

// Each live lane waits at __syncthreads or in a warp collective, and not all
// at one __syncthreads(): the first lane (in block order) that shows it names
// the error.
void Block::barrier_failure() {
  const Lane* waiting = nullptr;
  const Lane* exited = nullptr;
  for (const Lane& lane : lanes_) {
    if (lane.state == LaneState::at_warp_op) deadlock();
    if (lane.state == LaneState::at_mbarrier) mbarrier_deadlock(lane);
    if (lane.state == LaneState::at_cluster_barrier) {
      throw LaunchError(cudaErrorLaunchTimeout,
                        cat(where(lane), ": deadlock: this thread waits in cluster_sync() (", describe_code(lane.site),
                            ") for every thread of its cluster, but ", cluster_->describe_absent(),
                            " (on a GPU: a hang)"));
    }
    if (lane.state == LaneState::done && !exited) exited = &lane;
    if (lane.state != LaneState::at_barrier) continue;
    if (!waiting) {
      waiting = &lane;
    } else if (!(lane.place == waiting->place) || lane.barrier != waiting->barrier) {
      throw LaunchError(cudaErrorLaunchTimeout,
                        cat(where(lane), ": barrier divergence: this thread waits at ", describe_code(lane.site),
                            " while thread ", format_dim(waiting->tid), " waits at ",
                            describe_code(waiting->site),
                            "; every thread of a block must reach the same __syncthreads() "
                            "(on a GPU: a hang or undefined behaviour)"));
    }
  }
  if (exited && waiting) {
    throw LaunchError(cudaErrorLaunchTimeout,
                      cat(where(*waiting), ": deadlock: this thread and ", lanes_.size() - done_ - 1,
                          " others wait at __syncthreads() (", describe_code(waiting->site), ") but thread ",
                          format_dim(exited->tid), " and ", done_ - 1,
                          " others have exited: __syncthreads() belongs only in code every thread of the block "
                          "reaches (the CUDA C++ Programming Guide). A GPU releases a barrier that only exited "
                          "threads hold up (PTX: exit) and would go on here; with those threads still running "
                          "elsewhere it would hang"));
  }
  deadlock();
}

}  // namespace warpnet::simt
