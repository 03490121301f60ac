// The kernel stepper: a registered kernel's traced copy runs under
// simt::Stepper (as `warpnet trace --block --warp` does), one warp of one
// block watched. Each stop is recorded, so stepping back replays the record;
// stepping past its end runs the launch on to the next stop.
//
// Shows: the grid of blocks and the warps of the block (click to watch
// another), the 32 lanes of the warp (active / elsewhere / exited), the
// current warp-level access (each lane's address on a picture of the buffer's
// 32-byte sectors, sectors touched against the fewest possible; or the 32
// shared-memory banks, conflicts in red), for a tensor-core kernel which
// lane holds which fragment element, and the kernel's source with the
// current line highlighted.
#pragma once
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "device/registry.hpp"
#include "simt/stepper.hpp"
#include "visualizer/panel.hpp"

namespace warpnet::viz {

struct StepperOptions {
  std::string kernel = "matmul/03_smem_tiled";
  std::string sizes = "64,64,64";
  std::string block = "0,0,0";
  int warp = 0;
  int steps = 1;                 // stops to advance when the kernel is opened
  int launches = 0;              // then launches to skip to (an op of several: conv2d/10)
  bool step_every_frame = false;  // advance one stop per frame (measuring frames per second)
  bool fragments = false;         // show the tensor-core fragments (fragment_view.hpp)
};

// The warp-level access at a stop, worked out when the stop is recorded (the
// launch, and its allocations, move on after it).
struct AccessView {
  bool valid = false;
  std::string where;  // the instruction's "file:line (function)"
  simt::Space space = simt::Space::global;
  bool write = false;
  unsigned bytes = 0;  // per lane
  unsigned mask = 0;   // lanes taking part
  std::array<uintptr_t, 32> addresses{};
  unsigned sectors = 0, ideal_sectors = 0;        // global
  unsigned wavefronts = 0, ideal_wavefronts = 0;  // shared
  uintptr_t allocation = 0;                       // global: the buffer holding the access
  size_t allocation_bytes = 0;
  std::string variable;  // shared: the __shared__ variable
};

struct RecordedStop {
  simt::WarpStop warp;
  AccessView access;
};

class StepperPanel : public Panel {
 public:
  explicit StepperPanel(StepperOptions options);
  ~StepperPanel() override;
  void Draw() override;
  std::string failure() const override { return error_; }

  // Runs the chosen kernel from the start, watching the chosen warp.
  void open();
  void forward();  // one stop on (replayed if recorded, else run)
  void back();     // one stop back (replay)
  // Forward until a stop at a barrier (true) or at a memory access (false).
  void run_to(bool barrier);
  // Forward to the first stop in a later launch of the op (conv2d/10: from
  // the filter transform to the input transform, then each GEMM).
  void next_launch();

 private:
  struct Session;
  void draw_controls();
  // Forward until `arrived` holds for the current stop, or the launches end.
  void run_until(const std::function<bool(const RecordedStop&)>& arrived);
  void draw_lanes(const RecordedStop& stop);
  void draw_access(const RecordedStop& stop);
  void draw_buffer(const AccessView& access);
  void draw_source(const RecordedStop& stop);

  StepperOptions options_;
  std::vector<const device::Kernel*> kernels_;
  int kernel_index_ = 0;
  char sizes_text_[64] = {};
  int block_[3] = {0, 0, 0};
  int warp_ = 0;
  bool show_fragments_ = false;
  std::unique_ptr<Session> session_;
  std::string error_;
  double open_seconds_ = 0;
  // The source file shown, read once per file.
  std::string source_path_;
  std::vector<std::string> source_lines_;
  int scrolled_to_ = -1;
};

}  // namespace warpnet::viz
