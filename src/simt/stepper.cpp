#include "simt/stepper.hpp"

#include <boost/context/protected_fixedsize_stack.hpp>
#include <nlohmann/json.hpp>

#include "simt/block.hpp"
#include "simt/checker.hpp"
#include "simt/fiber_sanitizer.hpp"
#include "simt/symbols.hpp"

namespace warpnet::simt {

namespace ctx = boost::context;

namespace {
thread_local Stepper* active = nullptr;
// The launch's own stack: the scheduler, a Block, the host code of a launch.
constexpr size_t kLauncherStack = size_t(1) << 20;
}  // namespace

Stepper* active_stepper() { return active; }

// The launcher's stack is allocated here, not by the fiber, so that its
// bounds are known: AddressSanitizer is told of every switch between it and
// the host, as block.cpp does for lanes (fiber_sanitizer.hpp).
Stepper::Stepper(uint3 block, unsigned warp, std::function<void()> launch)
    : block_(block), warp_(warp), launch_(std::move(launch)) {
  if (active) throw Error("simt::Stepper: this thread already has a stepper");
  active = this;
  ctx::protected_fixedsize_stack allocator(kLauncherStack);
  const ctx::stack_context stack = allocator.allocate();
  launcher_bottom_ = static_cast<char*>(stack.sp) - stack.size;
  launcher_size_ = stack.size;
  launcher_ = ctx::fiber(std::allocator_arg, ctx::preallocated(stack.sp, stack.size, stack), allocator,
                         [this](ctx::fiber&& host) {
                           asan_finish_switch(nullptr, &host_bottom_, &host_size_);
                           host_ = std::move(host);
                           try {
                             launch_();
                           } catch (...) {
                             error_ = std::current_exception();
                           }
                           finished_ = true;
                           asan_start_switch(nullptr, host_bottom_, host_size_);
                           return std::move(host_);
                         });
}

Stepper::~Stepper() {
  detached_ = true;  // pause() no longer stops
  if (!finished_) to_launcher();
  active = nullptr;
}

void Stepper::to_launcher() {
  void* fake_stack = nullptr;
  asan_start_switch(&fake_stack, launcher_bottom_, launcher_size_);
  launcher_ = std::move(launcher_).resume();
  asan_finish_switch(fake_stack, nullptr, nullptr);
}

bool Stepper::step() {
  if (finished_) return false;
  to_launcher();
  if (!finished_) return true;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  return false;
}

bool Stepper::watches(const Block& block, unsigned warp) const {
  const uint3 b = block.index();
  return !detached_ && warp == warp_ && b.x == block_.x && b.y == block_.y && b.z == block_.z;
}

bool Stepper::pause(Block& block, unsigned warp) {
  if (!watches(block, warp)) return false;
  const unsigned begin = warp * 32, end = begin + block.lanes_in_warp(warp);
  bool held = false, all_at_barrier = true, any_at_barrier = false;
  for (unsigned i = begin; i < end; ++i) {
    const LaneState s = block.lane(i).state;
    held |= s == LaneState::at_memory;
    any_at_barrier |= s == LaneState::at_barrier;
    all_at_barrier &= s == LaneState::at_barrier || s == LaneState::done;
  }
  if (held) {
    show(block, warp, false);
    for (unsigned i = begin; i < end; ++i)
      if (block.lane(i).state == LaneState::at_memory) block.lane(i).state = LaneState::ready;
    return true;
  }
  if (any_at_barrier && all_at_barrier && shown_barrier_ != block.barrier_epoch()) {
    shown_barrier_ = block.barrier_epoch();
    show(block, warp, true);
  }
  return false;
}

void Stepper::hold(Block& block, Lane& lane, const Touched& touched, uintptr_t address, size_t bytes, bool write,
                   const void* pc) {
  lane.access = {pc, address, unsigned(bytes), write, touched.space, touched.variable};
  lane.state = LaneState::at_memory;
  block.park(lane);
}

void Stepper::show(Block& block, unsigned warp, bool at_barrier) {
  stop_.kernel = block.kernel_name();
  stop_.launch = block.shape();
  stop_.launch_index = launches_ - 1;
  stop_.block = block.index();
  stop_.warp = warp;
  stop_.at_barrier = at_barrier;
  stop_.lanes.clear();
  for (unsigned i = warp * 32; i < warp * 32 + block.lanes_in_warp(warp); ++i) {
    const Lane& lane = block.lane(i);
    LaneView v;
    v.lane = lane.lane;
    v.thread = lane.tid;
    switch (lane.state) {
      case LaneState::at_memory:
        v.state = LaneView::State::memory;
        v.where = describe_code(lane.access.pc);
        v.address = lane.access.address;
        v.bytes = lane.access.bytes;
        v.write = lane.access.write;
        v.space = lane.access.space;
        if (lane.access.variable) v.variable = *lane.access.variable;
        break;
      case LaneState::at_barrier: v.state = LaneView::State::barrier, v.where = describe_code(lane.site); break;
      case LaneState::at_mbarrier: v.state = LaneView::State::barrier, v.where = describe_code(lane.site); break;
      case LaneState::at_warp_op:
      case LaneState::yielded: v.state = LaneView::State::collective, v.where = describe_code(lane.site); break;
      case LaneState::sleeping: v.state = LaneView::State::sleeping, v.where = describe_code(lane.site); break;
      default: v.state = LaneView::State::exited;
    }
    stop_.lanes.push_back(std::move(v));
  }
  void* fake_stack = nullptr;
  asan_start_switch(&fake_stack, host_bottom_, host_size_);
  host_ = std::move(host_).resume();  // back to step(); returns at the next step()
  asan_finish_switch(fake_stack, nullptr, nullptr);
}

nlohmann::json to_json(const WarpStop& stop) {
  static const char* const states[] = {"memory", "barrier", "collective", "exited", "sleeping"};
  const auto dim = [](const auto& d) { return nlohmann::json::array({d.x, d.y, d.z}); };
  nlohmann::json lanes = nlohmann::json::array();
  for (const LaneView& v : stop.lanes) {
    nlohmann::json l{{"lane", v.lane}, {"thread", dim(v.thread)}, {"state", states[int(v.state)]}, {"where", v.where}};
    if (v.state == LaneView::State::memory) {
      l["address"] = v.address;
      l["bytes"] = v.bytes;
      l["kind"] = v.write ? "store" : "load";
      l["space"] = v.space == Space::global ? "global" : "shared";
      l["variable"] = v.variable;
    }
    lanes.push_back(std::move(l));
  }
  return {{"kernel", stop.kernel},
          {"grid", dim(stop.launch.grid)},
          {"threads", dim(stop.launch.block)},
          {"launch", stop.launch_index},
          {"block", dim(stop.block)}, {"warp", stop.warp}, {"at_barrier", stop.at_barrier}, {"lanes", lanes}};
}

}  // namespace warpnet::simt
