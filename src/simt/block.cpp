// The block scheduler. A phase runs every ready lane, warp by warp, until it
// parks (barrier or warp collective) or exits; complete warp collectives are
// resolved as soon as their lanes are all parked; when no lane can run, the
// block barrier is released, or nothing ever can and that is reported.
#include "simt/block.hpp"

#include <cstring>

#include <boost/context/detail/exception.hpp>

#include "simt/checker.hpp"
#include "simt/fiber_sanitizer.hpp"
#include "simt/stacks.hpp"
#include "simt/stepper.hpp"
#include "simt/symbols.hpp"

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

}  // namespace

std::string format_dim(uint3 v) { return cat("(", v.x, ",", v.y, ",", v.z, ")"); }

Block::Block(const KernelCall& call, const LaunchShape& shape, const std::string& kernel_name, StackSet& stacks,
             void* dynamic_shared, TraceSink& sink)
    : call_(call),
      shape_(shape),
      kernel_name_(kernel_name),
      stacks_(stacks),
      dynamic_shared_(dynamic_shared),
      sink_(sink) {
  const dim3 b = shape.block;
  const unsigned n = b.x * b.y * b.z;
  lanes_.resize(n);
  warps_ = (n + 31) / 32;
  warp_epochs_.assign(warps_, 0);
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

std::string Block::where() const { return cat("kernel ", kernel_name_, ", block ", format_dim(index_)); }
std::string Block::where(const Lane& lane) const { return cat(where(), ", thread ", format_dim(lane.tid)); }

void Block::start_lanes() {
  for (Lane& lane : lanes_) {
    lane.state = LaneState::ready;
    lane.async_copies.clear();
    lane.async_groups = 0;
    lane.started = false;
    ctx::stack_context stack;
    stack.sp = stacks_.top(lane.linear);
    stack.size = size_t(static_cast<char*>(stack.sp) - stacks_.bottom(lane.linear));
    asan_unpoison(stacks_.bottom(lane.linear), stack.size);
    lane.fiber = ctx::fiber(std::allocator_arg, ctx::preallocated(stack.sp, stack.size, stack), KeepStack{},
                            [this, &lane](ctx::fiber&& scheduler) {
                              asan_finish_switch(nullptr, &scheduler_stack_, &scheduler_stack_size_);
                              lane.scheduler = std::move(scheduler);
                              lane.started = true;
                              try {
                                if (!tearing_down_) call_.invoke(call_.bound);
                              } catch (const ctx::detail::forced_unwind&) {
                                // The block is being torn down: Boost unwinds this
                                // stack and switches back to the destroyer.
                                asan_start_switch(nullptr, scheduler_stack_, scheduler_stack_size_);
                                throw;
                              } catch (...) {
                                if (!error_) error_ = std::current_exception();
                              }
                              lane.state = LaneState::done;
                              asan_start_switch(nullptr, scheduler_stack_, scheduler_stack_size_);
                              return std::move(lane.scheduler);
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
    void* fake_stack = nullptr;
    asan_start_switch(&fake_stack, stacks_.bottom(lane.linear), stack_bytes(lane));
    if (lane.started)
      lane.fiber = {};
    else
      lane.fiber = std::move(lane.fiber).resume();
    asan_finish_switch(fake_stack, nullptr, nullptr);
  }
  tearing_down_ = false;
}

size_t Block::stack_bytes(const Lane& lane) const {
  return size_t(static_cast<char*>(stacks_.top(lane.linear)) - stacks_.bottom(lane.linear));
}

void Block::resume(Lane& lane) {
  current_lane = &lane;
  void* fake_stack = nullptr;
  asan_start_switch(&fake_stack, stacks_.bottom(lane.linear), stack_bytes(lane));
  lane.fiber = std::move(lane.fiber).resume();
  asan_finish_switch(fake_stack, nullptr, nullptr);
  current_lane = nullptr;
  if (lane.state == LaneState::done) ++done_;
  if (error_) std::rethrow_exception(error_);
}

void Block::park(Lane& lane) {
  asan_start_switch(&lane.asan_fake_stack, scheduler_stack_, scheduler_stack_size_);
  // Finished on every way back: a normal resume, and the forced_unwind that
  // resume() throws when the block is torn down.
  struct FinishSwitch {
    Lane& lane;
    ~FinishSwitch() { asan_finish_switch(lane.asan_fake_stack, nullptr, nullptr); }
  } finish{lane};
  lane.scheduler = std::move(lane.scheduler).resume();
}

void Block::run(uint3 index) {
  index_ = index;
  done_ = 0;
  barrier_epoch_ = 0;
  std::fill(warp_epochs_.begin(), warp_epochs_.end(), 0u);
  error_ = nullptr;
  current_block = this;
  if (checker_) checker_->start_block();
  try {
    start_lanes();
    for (;;) {
      for (unsigned w = 0; w < warps_; ++w) run_warp(w);
      if (done_ == lanes_.size()) break;
      release_barrier();
    }
  } catch (...) {
    destroy_fibers();
    current_block = nullptr;
    throw;
  }
  if (checker_) checker_->end_block();
  current_block = nullptr;
}

void Block::run_warp(unsigned warp) {
  const unsigned begin = warp * 32, end = begin + lanes_in_warp(warp);
  Stepper* stepper = active_stepper();
  for (;;) {
    for (unsigned i = begin; i < end; ++i)
      if (lanes_[i].state == LaneState::ready) resume(lanes_[i]);
    // A stepped warp shows its stop before collectives resolve: a lane held
    // at a memory access could still join one.
    if (stepper && stepper->pause(*this, warp)) continue;
    if (!resolve_warp_ops(warp)) return;
  }
}

void Block::release_barrier() {
  // No lane can run: each live one waits at __syncthreads or in a warp collective.
  const Lane* waiting = nullptr;
  const Lane* exited = nullptr;
  for (const Lane& lane : lanes_) {
    if (lane.state == LaneState::at_warp_op) deadlock();
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
  if (exited) {
    throw LaunchError(cudaErrorLaunchTimeout,
                      cat(where(*waiting), ": deadlock: this thread and ", lanes_.size() - done_ - 1,
                          " others wait at __syncthreads() (", describe_code(waiting->site), ") but thread ",
                          format_dim(exited->tid), " and ", done_ - 1,
                          " others have exited and can never arrive; a __syncthreads() inside a branch not "
                          "every thread takes never completes (on a GPU: a hang or undefined behaviour)"));
  }
  unsigned count = 0;
  for (const Lane& lane : lanes_) count += lane.value != 0;
  uint64_t result = 0;
  switch (waiting->barrier) {
    case BarrierKind::plain: result = 0; break;
    case BarrierKind::count: result = count; break;
    case BarrierKind::all: result = count == lanes_.size(); break;
    case BarrierKind::any: result = count != 0; break;
  }
  for (Lane& lane : lanes_) {
    lane.result = result;
    lane.state = LaneState::ready;
  }
  if (checker_) checker_->end_phase();  // before the epoch moves: requests of this phase are complete
  ++barrier_epoch_;
}

}  // namespace warpnet::simt
