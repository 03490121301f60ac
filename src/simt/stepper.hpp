// The stepping API: run one chosen warp of one block to its next memory
// instruction or barrier, look at every lane (its source line, the address it
// is about to touch), and go on. What the visualizer and lesson 03 step with.
//
// The launch runs on a fiber of the calling thread in the deterministic mode
// (one worker, blocks in order), so step() is a plain call: it resumes the
// launch until the watched warp stops and returns. Memory stops need a kernel
// compiled traced (warpnet_simt_traced): the stop is the access callback.
// Barrier stops work in any build. One Stepper per thread at a time, and no
// other launch on that thread while it lives.
#pragma once
#include <boost/context/fiber.hpp>
#include <exception>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "simt/launch.hpp"
#include "simt/trace.hpp"

namespace warpnet::simt {

class Block;
struct Lane;
struct Touched;

// One lane of the watched warp at a stop.
struct LaneView {
  enum class State { memory, barrier, collective, exited, sleeping };
  unsigned lane = 0;
  uint3 thread{};
  State state = State::exited;
  std::string where;  // "kernels/matmul/03_smem_tiled.cu:27 (sgemm_smem_tiled<16>)"; empty once exited
  // State::memory: the access the lane makes when it goes on.
  uintptr_t address = 0;
  unsigned bytes = 0;
  bool write = false;
  Space space = Space::global;
  std::string variable;  // shared: the __shared__ variable ("As"); global: empty
};

struct WarpStop {
  // The launch the warp belongs to: an op may make several (a transform, then
  // GEMMs), each with its own kernel and shape.
  std::string kernel;  // "sgemm_smem_tiled<16>"
  LaunchShape launch;
  unsigned launch_index = 0;  // the stepper's launches, counted from 0
  uint3 block{};
  unsigned warp = 0;
  bool at_barrier = false;  // every live lane waits at __syncthreads(); else some are at a memory access
  std::vector<LaneView> lanes;  // the warp's lanes, in lane order
};

class Stepper {
 public:
  // `launch` makes one launch (simt::launch, launch_kernel). Nothing runs before the first step().
  Stepper(uint3 block, unsigned warp, std::function<void()> launch);
  // Lets the launch run to its end, unwatched (after abandon(): only the block in progress).
  ~Stepper();
  Stepper(const Stepper&) = delete;
  Stepper& operator=(const Stepper&) = delete;

  // Runs until the watched warp stops again; false once the launch has
  // finished (then rethrows the launch's error, if any).
  bool step();
  const WarpStop& stop() const { return stop_; }
  // The launch's result is no longer wanted (the visualizer opened another
  // kernel): its blocks not yet started, and those of any later launch of
  // this stepper, are skipped, so the destructor returns after the block in
  // progress instead of after the whole grid. Its outputs are then unfinished.
  void abandon() { abandoned_ = true; }
  bool abandoned() const { return abandoned_; }

  // Called by the scheduler as each launch begins.
  void launch_begun() { ++launches_; }
  // Called by the scheduler and the access callbacks of the watched block.
  bool watches(const Block& block, unsigned warp) const;
  // After a pass over the warp: shows a stop if its lanes are held at memory
  // accesses (then releases them: true) or newly all at a barrier (false).
  bool pause(Block& block, unsigned warp);
  // A lane of a watched warp reached a device-memory access: hold it there.
  void hold(Block& block, Lane& lane, const Touched& touched, uintptr_t address, size_t bytes, bool write,
            const void* pc);

 private:
  void show(Block& block, unsigned warp, bool at_barrier);
  void to_launcher();

  uint3 block_;
  unsigned warp_;
  std::function<void()> launch_;
  boost::context::fiber launcher_, host_;
  // Both sides' stacks, for AddressSanitizer (fiber_sanitizer.hpp); unused outside the asan preset.
  const void* launcher_bottom_ = nullptr;
  const void* host_bottom_ = nullptr;
  size_t launcher_size_ = 0, host_size_ = 0;
  bool finished_ = false, detached_ = false, abandoned_ = false;
  unsigned shown_barrier_ = ~0u;  // the barrier epoch whose stop was shown
  unsigned launches_ = 0;  // begun so far
  std::exception_ptr error_;
  WarpStop stop_;
};

// {"kernel", "grid": [x,y,z], "threads": [x,y,z], "launch": i, "block": [x,y,z],
// "warp": w, "at_barrier": b, "lanes": [{"lane", "thread", "state", "where",
// and at memory "address", "bytes", "kind", "space", "variable"}]}: for the visualizer.
nlohmann::json to_json(const WarpStop& stop);

// The stepper of the calling thread, or null.
Stepper* active_stepper();

}  // namespace warpnet::simt
