#include "visualizer/stepper_panel.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/number_list.hpp"
#include "core/rng.hpp"
#include "device/run.hpp"
#include "simt/allocations.hpp"
#include "simt/launch.hpp"
#include "simt/trace.hpp"
#include "visualizer/fragment_view.hpp"

namespace warpnet::viz {

// [SECTION] The session: one traced launch, its recorded stops

struct StepperPanel::Session {
  const device::Kernel* kernel = nullptr;
  device::Sizes sizes;
  device::Launch shape;
  uint3 block{};
  unsigned warp = 0;
  std::vector<Tensor> inputs, outputs;
  std::vector<RecordedStop> stops;
  size_t current = 0;
  bool finished = false;
  std::string result;  // once the launch has ended: how it compares with the CPU reference
  // Last: destroyed first, since its launch (run to its end by the destructor)
  // reads `inputs` and writes `outputs`.
  std::unique_ptr<simt::Stepper> stepper;
};

namespace {

using simt::LaneView;

// The lanes of the stop taking part in the access shown: those at the same
// instruction (source line, kind, size and variable) as the lowest lane at a
// memory access. Lanes at other lines are the warp's divergence.
AccessView access_of(const simt::WarpStop& stop) {
  AccessView a;
  if (stop.at_barrier) return a;
  const LaneView* first = nullptr;
  for (const LaneView& v : stop.lanes)
    if (v.state == LaneView::State::memory) {
      first = &v;
      break;
    }
  if (!first) return a;
  a.valid = true;
  a.where = first->where;
  a.space = first->space;
  a.write = first->write;
  a.bytes = first->bytes;
  a.variable = first->variable;
  uintptr_t lowest = ~uintptr_t(0);
  for (const LaneView& v : stop.lanes)
    if (v.state == LaneView::State::memory && v.where == a.where && v.space == a.space && v.write == a.write &&
        v.bytes == a.bytes && v.variable == a.variable) {
      a.mask |= 1u << v.lane;
      a.addresses[v.lane] = v.address;
      lowest = std::min(lowest, v.address);
    }
  if (a.space == simt::Space::global) {
    a.sectors = simt::sectors_touched(a.addresses, a.mask, a.bytes);
    a.ideal_sectors = simt::ideal_sectors(a.addresses, a.mask, a.bytes);
    if (const auto alloc = simt::find_allocation(reinterpret_cast<const void*>(lowest), 1)) {
      a.allocation = alloc->begin;
      a.allocation_bytes = alloc->bytes;
    }
  } else {
    a.wavefronts = simt::shared_wavefronts(a.addresses, a.mask, a.bytes);
    // As the tracer counts it (checker.cpp): every byte asked for, 128 per pass.
    a.ideal_wavefronts = (unsigned(__builtin_popcount(a.mask)) * std::max(a.bytes, 4u) + 127) / 128;
  }
  return a;
}

enum class Cell { active, inactive, exited, absent };

Cell cell_of(const RecordedStop& s, unsigned lane) {
  if (lane >= s.warp.lanes.size()) return Cell::absent;  // past the end of a partial warp
  const LaneView& v = s.warp.lanes[lane];
  if (v.state == LaneView::State::exited) return Cell::exited;
  if (s.warp.at_barrier) return v.state == LaneView::State::barrier ? Cell::active : Cell::inactive;
  return s.access.mask >> lane & 1 ? Cell::active : Cell::inactive;
}

const char* state_name(LaneView::State s) {
  switch (s) {
    case LaneView::State::memory: return "at a memory access";
    case LaneView::State::barrier: return "at __syncthreads()";
    case LaneView::State::collective: return "at a warp collective";
    case LaneView::State::exited: return "exited";
    case LaneView::State::sleeping: return "in __nanosleep()";
  }
  return "";
}

// "kernels/matmul/03_smem_tiled.cu:27 (sgemm<16>)" -> {"kernels/matmul/03_smem_tiled.cu", 27}; a
// helper's line after the kernel's ("k.cu:126, in kernels/common/float4_rows.hpp:33 (...)") is dropped.
std::pair<std::string, int> file_line(const std::string& where) {
  std::string s = where.substr(0, where.find(" ("));
  s = s.substr(0, s.find(", in "));
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos) return {"", 0};
  try {
    return {s.substr(0, colon), std::stoi(s.substr(colon + 1))};
  } catch (const std::exception&) {
    return {"", 0};
  }
}

std::string dims(const dim3& d) {
  char b[64];
  std::snprintf(b, sizeof b, "(%u,%u,%u)", d.x, d.y, d.z);
  return b;
}

ImVec2 operator+(ImVec2 a, ImVec2 b) { return {a.x + b.x, a.y + b.y}; }

}  // namespace

// [SECTION] Running and stepping

StepperPanel::StepperPanel(StepperOptions options) : options_(std::move(options)) {
  for (const device::Kernel* k : device::kernels(device::Copy::traced))
    if (k->emulator) kernels_.push_back(k);
  for (size_t i = 0; i < kernels_.size(); ++i)
    if (kernels_[i]->id() == options_.kernel) kernel_index_ = int(i);
  if (!kernels_.empty() && kernels_[size_t(kernel_index_)]->id() != options_.kernel) {
    try {  // "matmul/3" or a unique name
      const device::Kernel& k = device::find_kernel(options_.kernel, device::Copy::traced);
      for (size_t i = 0; i < kernels_.size(); ++i)
        if (kernels_[i] == &k) kernel_index_ = int(i);
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  }
  std::snprintf(sizes_text_, sizeof sizes_text_, "%s", options_.sizes.c_str());
  try {
    auto b = parse_number_list(options_.block, "stepper: --block");
    // (A grid's x reaches 2^31 - 1: past it the value would wrap, and a 4th would be dropped.)
    WN_CHECK(b.size() <= 3, "stepper: --block: x,y,z, at most three numbers: '", options_.block, "'");
    for (size_t i = 0; i < b.size(); ++i) {
      WN_CHECK(b[i] >= 0 && b[i] <= INT32_MAX, "stepper: --block: ", b[i], " is not a block index (0 to 2^31 - 1)");
      block_[i] = int(b[i]);
    }
  } catch (const std::exception& e) {
    error_ = e.what();
  }
  warp_ = options_.warp;
  show_fragments_ = options_.fragments;
  if (!error_.empty()) std::fprintf(stderr, "warpnet-viz: %s\n", error_.c_str());
  if (error_.empty() && !kernels_.empty()) {
    open();
    if (show_fragments_ && session_ && !fragment_shape_of(*session_->kernel))
      std::printf("warpnet-viz: --fragments: %s\n", no_fragments_reason(*session_->kernel).c_str());
    for (int i = 1; i < options_.steps; ++i) forward();
    for (int i = 0; i < options_.launches; ++i) next_launch();
    if (options_.launches > 0 && session_ && !session_->stops.empty()) {
      const simt::WarpStop& w = session_->stops[session_->current].warp;
      std::printf("warpnet-viz: at launch %u, %s: grid %s, block %s\n", w.launch_index + 1, w.kernel.c_str(),
                  dims(w.launch.grid).c_str(), dims(w.launch.block).c_str());
      if (w.launch_index < unsigned(options_.launches)) {  // the picture is of an earlier launch than asked: a failure
        error_ = cat("--launches ", options_.launches, ": the watched warp stops in no launch after launch ",
                     w.launch_index + 1);
        std::fprintf(stderr, "warpnet-viz: %s\n", error_.c_str());
      }
    }
  }
}

// The launch's result is not wanted any more: end it after its block in progress.
StepperPanel::~StepperPanel() {
  if (session_) session_->stepper->abandon();
}

void StepperPanel::open() {
  // One Stepper per thread: the old launch ends first, after its block in
  // progress (abandon: its other blocks are skipped, its outputs unwanted).
  if (session_) session_->stepper->abandon();
  session_.reset();
  error_.clear();
  scrolled_to_ = -1;
  if (kernels_.empty()) {
    error_ = "no traced kernel is registered";
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    auto s = std::make_unique<Session>();
    s->kernel = kernels_[size_t(kernel_index_)];
    const device::Op& op = device::op(s->kernel->op);
    s->sizes = device::complete_sizes(op, parse_number_list(sizes_text_, "stepper: sizes"));
    s->shape = s->kernel->shape(s->sizes);
    // Not checked against the registry's launch shape: an op of several
    // launches (conv2d/10) has blocks and warps in its other launches that
    // this one lacks. A warp no launch has never stops (said below).
    WN_CHECK(block_[0] >= 0 && block_[1] >= 0 && block_[2] >= 0 && warp_ >= 0, "stepper: block (", block_[0], ",",
             block_[1], ",", block_[2], ") and warp ", warp_, ": they count from 0");
    s->block = uint3{unsigned(block_[0]), unsigned(block_[1]), unsigned(block_[2])};
    s->warp = unsigned(warp_);
    device::check_traced_work(*s->kernel, s->sizes, "stepper");
    Rng rng(1);
    s->inputs = device::make_inputs(*s->kernel, s->sizes, rng);
    device::check_traced_memory(*s->kernel, s->sizes, s->inputs, "stepper");
    simt::set_workers(1);  // blocks in order: the stops repeat exactly (as `warpnet trace` runs)
    Session* raw = s.get();
    s->stepper = std::make_unique<simt::Stepper>(
        s->block, s->warp, [raw] { raw->outputs = device::run_emulated(*raw->kernel, raw->sizes, raw->inputs); });
    session_ = std::move(s);
    forward();
    const Session& opened = *session_;
    if (opened.stops.empty() && opened.finished && error_.empty())
      error_ = cat("stepper: block ", dims(dim3(opened.block.x, opened.block.y, opened.block.z)), " warp ",
                   opened.warp, " never stopped: no launch of ", opened.kernel->id(), " at these sizes has that warp, "
                   "or it touched no memory and met no barrier (the registry's launch: grid ", dims(opened.shape.grid),
                   ", block ", dims(opened.shape.block), ")");
  } catch (const std::exception& e) {
    error_ = e.what();
  }
  open_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!error_.empty())
    std::fprintf(stderr, "warpnet-viz: %s\n", error_.c_str());
  else if (session_)
    std::printf("warpnet-viz: %s at %s opened traced, first stop in %.3f s\n", session_->kernel->id().c_str(),
                device::describe_sizes(device::op(session_->kernel->op), session_->sizes).c_str(), open_seconds_);
}

void StepperPanel::forward() {
  if (!session_) return;
  Session& s = *session_;
  if (s.current + 1 < s.stops.size()) {
    ++s.current;
    return;
  }
  if (s.finished) return;
  try {
    if (s.stepper->step()) {
      s.stops.push_back({s.stepper->stop(), access_of(s.stepper->stop())});
      s.current = s.stops.size() - 1;
      return;
    }
    s.finished = true;
    const device::Comparison c = device::compare(*s.kernel, s.sizes, s.inputs, s.outputs);
    s.result = c.mismatches ? "the result DIFFERS from the CPU reference:\n" + c.first
                            : "the result matches the CPU reference";
  } catch (const std::exception& e) {
    s.finished = true;
    error_ = e.what();
  }
}

void StepperPanel::back() {
  if (session_ && session_->current > 0) --session_->current;
}

void StepperPanel::run_until(const std::function<bool(const RecordedStop&)>& arrived) {
  if (!session_) return;
  Session& s = *session_;
  // A bound keeps the window responsive on a kernel that never gets there.
  for (int i = 0; i < 100000; ++i) {
    const size_t before = s.current, recorded = s.stops.size();
    forward();
    if (s.current == before && s.stops.size() == recorded) return;  // the launch has ended
    if (arrived(s.stops[s.current])) return;
  }
}

void StepperPanel::run_to(bool barrier) {
  run_until([barrier](const RecordedStop& r) { return r.warp.at_barrier == barrier; });
}

void StepperPanel::next_launch() {
  if (!session_ || session_->stops.empty()) return;
  const unsigned from = session_->stops[session_->current].warp.launch_index;
  run_until([from](const RecordedStop& r) { return r.warp.launch_index != from; });
}

// [SECTION] Drawing

void StepperPanel::Draw() {
  if (options_.step_every_frame && session_) {
    if (session_->finished && session_->current + 1 >= session_->stops.size()) session_->current = 0;
    forward();
  }
  ImGui::BeginChild("controls", ImVec2(layout::kControlsWidth, 0), false);
  draw_controls();
  ImGui::EndChild();

  ImGui::SetCursorScreenPos(ImVec2(layout::kPicturesX, layout::kTopBarHeight + 8));
  ImGui::BeginGroup();
  if (!session_ || session_->stops.empty()) {
    ImGui::TextUnformatted(session_ ? "the launch ended before the watched warp stopped" : "no kernel open");
    if (!error_.empty()) {  // why, where the eye is, not only in the narrow column on the left
      ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + std::max(200.0f, ImGui::GetContentRegionAvail().x - 20));
      warning_text(error_);
      ImGui::PopTextWrapPos();
    }
    ImGui::EndGroup();
    return;
  }
  const RecordedStop& stop = session_->stops[session_->current];
  draw_lanes(stop);
  if (show_fragments_) {
    if (const FragmentShape* shape = fragment_shape_of(*session_->kernel)) draw_fragments(*shape);
    else ImGui::TextUnformatted(no_fragments_reason(*session_->kernel).c_str());
  }
  draw_access(stop);
  draw_source(stop);
  ImGui::EndGroup();
}

void StepperPanel::draw_controls() {
  // Keyboard: arrows step, B runs to the next barrier, M to the next memory access, L to the next launch.
  if (!ImGui::GetIO().WantTextInput) {
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow))) forward();
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow))) back();
    if (ImGui::IsKeyPressed('B', false)) run_to(true);
    if (ImGui::IsKeyPressed('M', false)) run_to(false);
    if (ImGui::IsKeyPressed('L', false)) next_launch();
  }

  ImGui::TextUnformatted("Kernel (traced copy)");
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##kernel", kernels_.empty() ? "" : kernels_[size_t(kernel_index_)]->id().c_str())) {
    for (size_t i = 0; i < kernels_.size(); ++i) {
      const bool selected = int(i) == kernel_index_;
      if (ImGui::Selectable(kernels_[i]->id().c_str(), selected)) {
        if (kernels_[i]->op != kernels_[size_t(kernel_index_)]->op) {  // another op: its default sizes
          std::string text;
          for (int64_t v : device::op(kernels_[i]->op).defaults) {
            if (!text.empty()) text += ',';
            text += std::to_string(v);
          }
          std::snprintf(sizes_text_, sizeof sizes_text_, "%s", text.c_str());
        }
        kernel_index_ = int(i);
      }
      if (selected) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  if (!kernels_.empty()) {
    const device::Op& op = device::op(kernels_[size_t(kernel_index_)]->op);
    std::string names;
    for (const std::string& n : op.size_names) names += (names.empty() ? "" : ",") + n;
    ImGui::SetNextItemWidth(150);
    ImGui::InputText("sizes", sizes_text_, sizeof sizes_text_);
    ImGui::SameLine();
    help_marker(("Comma-separated: " + names + ". Left-out sizes take the op's defaults.").c_str());
  }
  ImGui::SetNextItemWidth(150);
  ImGui::InputInt3("block", block_);
  ImGui::SetNextItemWidth(150);
  ImGui::InputInt("warp", &warp_);
  ImGui::Checkbox("tensor-core fragments", &show_fragments_);
  ImGui::SameLine();
  help_marker("For a kernel with tensor-core inputs (wmma, mma.sync): which lane holds which element of the "
              "A, B and C fragments of its instruction.");
  if (ImGui::Button("Open (run traced)")) open();
  ImGui::SameLine();
  help_marker("Runs the kernel's traced copy on the emulator, one worker, blocks in order, and stops the chosen "
              "warp of the chosen block before every memory access and at every __syncthreads().");

  if (session_) {
    Session& s = *session_;
    ImGui::Separator();
    ImGui::Text("%s", s.kernel->id().c_str());
    // An op may make several launches (conv2d/10: transforms, then GEMMs):
    // the grid and block shown are those of the launch the current stop is
    // in; before the first stop, the registry's launch shape.
    const RecordedStop* at = s.stops.empty() ? nullptr : &s.stops[s.current];
    const dim3 grid = at ? at->warp.launch.grid : s.shape.grid;
    const dim3 threads = at ? at->warp.launch.block : s.shape.block;
    if (at) ImGui::TextWrapped("launch %u: %s", at->warp.launch_index + 1, at->warp.kernel.c_str());
    ImGui::Text("grid %s, block %s", dims(grid).c_str(), dims(threads).c_str());
    ImGui::Text("opened in %.2f s", open_seconds_);
    if (ImGui::Button("< Back")) back();
    ImGui::SameLine();
    if (ImGui::Button("Step >")) forward();
    ImGui::SameLine();
    help_marker("Step back replays the recorded stops; stepping past the last one runs the launch on. "
                "Keys: left/right arrows, B (next barrier), M (next memory access), L (next launch).");
    if (ImGui::Button("Next barrier")) run_to(true);
    ImGui::SameLine();
    if (ImGui::Button("Next memory access")) run_to(false);
    if (ImGui::Button("Next launch")) next_launch();
    ImGui::SameLine();
    help_marker("For an op of several launches (conv2d/10: filter and input transforms, 16 GEMMs, the output "
                "transform): runs on to the watched warp's first stop in the next launch that has it.");
    if (!s.stops.empty())
      ImGui::Text("stop %zu of %zu recorded%s", s.current + 1, s.stops.size(),
                  s.finished ? " (launch ended)" : "");
    if (s.finished && !s.result.empty()) ImGui::TextWrapped("%s", s.result.c_str());

    // The grid of blocks (one z slice) and the warps of the block; click one to watch it.
    ImGui::Separator();
    ImGui::Text("Grid of blocks, z = %u (click: watch it)", s.block.z);
    const dim3 g = grid;
    const float cell = std::clamp(std::min(300.0f / float(g.x), 120.0f / float(g.y)), 3.0f, 18.0f);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    ImVec2 p = ImGui::GetCursorScreenPos();
    const unsigned shown_x = std::min(g.x, unsigned(300 / cell)), shown_y = std::min(g.y, unsigned(120 / cell));
    for (unsigned y = 0; y < shown_y; ++y)
      for (unsigned x = 0; x < shown_x; ++x) {
        const bool on = x == s.block.x && y == s.block.y;
        const ImVec2 a = p + ImVec2(x * cell, y * cell);
        draw->AddRectFilled(a, a + ImVec2(cell - 1, cell - 1), on ? colour(layout::kActive) : IM_COL32(70, 70, 80, 255));
      }
    ImGui::InvisibleButton("grid", ImVec2(std::max(1.0f, shown_x * cell), std::max(1.0f, shown_y * cell)));
    if (ImGui::IsItemClicked()) {
      const ImVec2 m = ImGui::GetIO().MousePos;
      block_[0] = int((m.x - p.x) / cell), block_[1] = int((m.y - p.y) / cell), block_[2] = int(s.block.z);
      warp_ = int(s.warp);
      open();
      return;
    }
    if (shown_x < g.x || shown_y < g.y) ImGui::TextDisabled("(first %u x %u blocks shown)", shown_x, shown_y);

    const dim3 b = threads;
    const unsigned warps = (b.x * b.y * b.z + 31) / 32;
    ImGui::Text("Warps of block (%u,%u,%u)", s.block.x, s.block.y, s.block.z);
    p = ImGui::GetCursorScreenPos();
    const float wcell = 36;
    const unsigned per_row = 8;
    for (unsigned w = 0; w < warps; ++w) {
      const ImVec2 a = p + ImVec2((w % per_row) * wcell, (w / per_row) * 20.0f);
      draw->AddRectFilled(a, a + ImVec2(wcell - 2, 18),
                          w == s.warp ? colour(layout::kActive) : IM_COL32(70, 70, 80, 255));
      char label[16];
      std::snprintf(label, sizeof label, "%u", w);
      draw->AddText(a + ImVec2(4, 2), IM_COL32(235, 235, 235, 255), label);
    }
    ImGui::InvisibleButton("warps", ImVec2(per_row * wcell, ((warps + per_row - 1) / per_row) * 20.0f));
    if (ImGui::IsItemClicked()) {
      const ImVec2 m = ImGui::GetIO().MousePos;
      const unsigned w = unsigned((m.y - p.y) / 20) * per_row + unsigned((m.x - p.x) / wcell);
      if (w < warps) {
        warp_ = int(w);
        block_[0] = int(s.block.x), block_[1] = int(s.block.y), block_[2] = int(s.block.z);
        open();
        return;
      }
    }
  }
  if (!error_.empty()) {
    ImGui::Separator();
    warning_text(error_);
  }
}

void StepperPanel::draw_lanes(const RecordedStop& stop) {
  const simt::WarpStop& w = stop.warp;
  if (w.at_barrier)
    ImGui::Text("Warp %u of block (%u,%u,%u): at __syncthreads()", w.warp, w.block.x, w.block.y, w.block.z);
  else
    ImGui::Text("Warp %u of block (%u,%u,%u): %s %s", w.warp, w.block.x, w.block.y, w.block.z,
                stop.access.space == simt::Space::global ? "global" : "shared",
                stop.access.write ? "store" : "load");
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 grid(layout::kLaneGridX, layout::kLaneGridY);
  for (unsigned lane = 0; lane < 32; ++lane) {
    const layout::Point c = layout::lane_cell_centre(int(lane));
    const ImVec2 a(c.x - layout::kLaneCellWidth / 2, c.y - layout::kLaneCellHeight / 2);
    const ImVec2 z = a + ImVec2(layout::kLaneCellWidth, layout::kLaneCellHeight);
    const Cell kind = cell_of(stop, lane);
    if (kind == Cell::absent) {
      draw->AddRect(a, z, IM_COL32(90, 90, 90, 255));
      continue;
    }
    const layout::Rgb fill = kind == Cell::active ? layout::kActive
                             : kind == Cell::inactive ? layout::kInactive
                                                      : layout::kExited;
    draw->AddRectFilled(a, z, colour(fill));
    // The number in a corner, so the centre the tests sample stays the cell's colour.
    char label[16];
    std::snprintf(label, sizeof label, "%u", lane);
    draw->AddText(a + ImVec2(3, 1), IM_COL32(250, 250, 250, 255), label);
    if (ImGui::IsMouseHoveringRect(a, z)) {
      const LaneView& v = w.lanes[lane];
      ImGui::BeginTooltip();
      ImGui::Text("lane %u, thread (%u,%u,%u): %s", lane, v.thread.x, v.thread.y, v.thread.z, state_name(v.state));
      if (!v.where.empty()) ImGui::Text("%s", v.where.c_str());
      if (v.state == LaneView::State::memory)
        ImGui::Text("%s %u B at 0x%lx%s%s", v.write ? "store" : "load", v.bytes, (unsigned long)v.address,
                    v.variable.empty() ? "" : " in ", v.variable.c_str());
      ImGui::EndTooltip();
    }
  }
  // The key, right of the grid.
  ImGui::SetCursorScreenPos(ImVec2(grid.x + layout::kLaneGridWidth + 10, grid.y));
  ImGui::BeginGroup();
  const auto key = [](layout::Rgb c, const char* text) {
    ImDrawList* d = ImGui::GetWindowDrawList();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    d->AddRectFilled(p + ImVec2(0, 2), p + ImVec2(12, 14), colour(c));
    ImGui::Dummy(ImVec2(14, 14));
    ImGui::SameLine();
    ImGui::TextUnformatted(text);
  };
  key(layout::kActive, w.at_barrier ? "waits at the barrier" : "takes part in this access");
  key(layout::kInactive, "elsewhere (divergence)");
  key(layout::kExited, "exited");
  ImGui::EndGroup();
  ImGui::SetCursorScreenPos(ImVec2(grid.x, grid.y + layout::kLaneGridHeight + 4));
}

void StepperPanel::draw_access(const RecordedStop& stop) {
  const AccessView& a = stop.access;
  if (!a.valid) {
    ImGui::TextUnformatted("No memory access at this stop: the warp waits at a barrier.");
    return;
  }
  const unsigned lanes = unsigned(__builtin_popcount(a.mask));
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float avail = std::max(200.0f, ImGui::GetContentRegionAvail().x);
  if (a.space == simt::Space::global) {
    const double efficiency = a.sectors ? 100.0 * a.ideal_sectors / a.sectors : 0;
    ImGui::Text("%u lanes x %u B: %u sectors of 32 B touched, %u at least (%.0f%% efficiency)", lanes, a.bytes,
                a.sectors, a.ideal_sectors, efficiency);
    ImGui::SameLine();
    help_marker("A warp's global access is served in 32-byte sectors. Each box is one sector the warp touched; "
                "each lane's bytes are marked in it, with its number ('+': more lanes ask for the same bytes; "
                "hover to see which). '...' is a gap of untouched bytes. The fewest sectors that could hold the "
                "bytes asked for is the ideal.");
    // The touched sectors, in address order, as boxes 5 px a byte.
    std::map<uintptr_t, std::vector<unsigned>> sectors;  // sector -> lanes
    for (unsigned l = 0; l < 32; ++l)
      if (a.mask >> l & 1)
        for (uintptr_t s = a.addresses[l] / 32; s <= (a.addresses[l] + a.bytes - 1) / 32; ++s) sectors[s].push_back(l);
    const float byte_w = 5, box_w = 32 * byte_w, box_h = 30, gap = 16;
    ImVec2 p = ImGui::GetCursorScreenPos();
    const float left = p.x;
    uintptr_t previous = 0;
    int shown = 0;
    for (const auto& [sector, users] : sectors) {
      if (shown == 48) break;  // more would not fit; the count above is complete
      if (shown > 0 && sector != previous + 1) {
        draw->AddText(p + ImVec2(2, 8), IM_COL32(200, 200, 200, 255), "...");
        p.x += gap;
      }
      if (p.x + box_w > left + avail) p = ImVec2(left, p.y + box_h + 18);
      const uintptr_t base = sector * 32;
      draw->AddRectFilled(p, p + ImVec2(box_w, box_h), colour(layout::kSector, 90));
      // Lanes asking for the same bytes share one mark: the first lane's
      // number, "+" when others read them too (all of them on hover).
      std::map<std::pair<uintptr_t, uintptr_t>, std::vector<unsigned>> ranges;  // [from, to) -> lanes
      for (unsigned l : users)
        ranges[{std::max(base, a.addresses[l]), std::min(base + 32, a.addresses[l] + a.bytes)}].push_back(l);
      for (const auto& [range, readers] : ranges) {
        const ImVec2 q = p + ImVec2(float(range.first - base) * byte_w, 3);
        const ImVec2 r = p + ImVec2(float(range.second - base) * byte_w, box_h - 3);
        draw->AddRectFilled(q, r, colour(layout::kActive, 200));
        draw->AddRect(q, r, IM_COL32(20, 20, 20, 255));
        const std::string label = cat(readers.front(), readers.size() > 1 ? "+" : "");
        if (r.x - q.x >= 7.0f * float(label.size()))
          draw->AddText(q + ImVec2(1, 6), IM_COL32(250, 250, 250, 255), label.c_str());
        if (readers.size() > 1 && ImGui::IsMouseHoveringRect(q, r)) {
          std::string all;
          for (unsigned l : readers) all += cat(all.empty() ? "" : ", ", l);
          ImGui::SetTooltip("lanes %s: the same %zu bytes", all.c_str(), size_t(range.second - range.first));
        }
      }
      draw->AddRect(p, p + ImVec2(box_w, box_h), colour(layout::kSector));
      if (a.allocation) {
        char off[32];
        std::snprintf(off, sizeof off, "+%lu", (unsigned long)(base - a.allocation));
        draw->AddText(p + ImVec2(0, box_h + 1), IM_COL32(170, 170, 170, 255), off);
      }
      p.x += box_w + 2;
      previous = sector;
      ++shown;
    }
    ImGui::Dummy(ImVec2(avail, p.y - ImGui::GetCursorScreenPos().y + box_h + 18));
    if (a.allocation) {
      ImGui::Text("in a %zu-byte allocation at 0x%lx (+offset of each sector in bytes)", a.allocation_bytes,
                  (unsigned long)a.allocation);
      draw_buffer(a);
    }
  } else {
    ImGui::Text("shared %s of %s, %u lanes x %u B: %u wavefronts, %u at least%s", a.write ? "store" : "load",
                a.variable.empty() ? "dynamic shared memory" : a.variable.c_str(), lanes, a.bytes, a.wavefronts,
                a.ideal_wavefronts, a.wavefronts > a.ideal_wavefronts ? " (bank conflict)" : "");
    ImGui::SameLine();
    help_marker("Shared memory is 32 banks of 4-byte words; a bank serves one word per pass. Each column is a "
                "bank, each cell a distinct word the warp asks of it, labelled with the first lane asking. Red: "
                "more words in a bank than the fewest passes (wavefronts) serve, a conflict. Lanes reading the "
                "same word share it. 8- and 16-byte accesses are served a half or quarter warp per pass.");
    std::array<std::map<uintptr_t, unsigned>, 32> banks;  // bank -> word -> first lane
    const unsigned words = std::max(1u, a.bytes / 4);
    for (unsigned l = 0; l < 32; ++l)
      if (a.mask >> l & 1)
        for (unsigned w = 0; w < words; ++w) banks[(a.addresses[l] / 4 + w) % 32].emplace(a.addresses[l] / 4 + w, l);
    const float col_w = std::min(28.0f, avail / 32), cell_h = 18;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    size_t rows = 1;
    for (unsigned b = 0; b < 32; ++b) {
      const ImVec2 head = p + ImVec2(b * col_w, 0);
      char label[16];
      std::snprintf(label, sizeof label, "%u", b);
      draw->AddText(head + ImVec2(2, 0), IM_COL32(170, 170, 170, 255), label);
      const auto& used = banks[b];
      if (used.empty()) {
        draw->AddRectFilled(head + ImVec2(0, 16), head + ImVec2(col_w - 2, 16 + cell_h), colour(layout::kBankIdle));
        continue;
      }
      // More words than the fewest passes need: a conflict. (8- and 16-byte
      // accesses take 2 or 4 passes anyway, a word per bank each.)
      const layout::Rgb c = used.size() > std::max(1u, a.ideal_wavefronts) ? layout::kBankConflict : layout::kBankOne;
      size_t row = 0;
      for (const auto& [word, lane] : used) {
        if (row == 8) break;
        const ImVec2 q = head + ImVec2(0, 16 + row * (cell_h + 2));
        draw->AddRectFilled(q, q + ImVec2(col_w - 2, cell_h), colour(c));
        std::snprintf(label, sizeof label, "%u", lane);
        draw->AddText(q + ImVec2(2, 2), IM_COL32(250, 250, 250, 255), label);
        ++row;
      }
      rows = std::max(rows, row);
    }
    ImGui::Dummy(ImVec2(32 * col_w, 16 + rows * (cell_h + 2) + 4));
  }
}

// The buffer of a global access drawn as the matrix it holds: the op's
// input or output of the allocation's size (rows: every dimension but the
// last; columns: the last), one cell per element, the elements the warp's
// lanes touch lit. Hovering a lit cell names its lanes.
void StepperPanel::draw_buffer(const AccessView& a) {
  const Session& s = *session_;
  struct Candidate {
    std::string name;
    Shape shape;
  };
  std::vector<Candidate> matches;
  for (size_t i = 0; i < s.inputs.size(); ++i)
    if (device::device_bytes(*s.kernel, s.inputs[i]).size() == a.allocation_bytes)
      matches.push_back({cat("input ", i), s.inputs[i].shape()});
  const std::vector<Shape> outs = device::op(s.kernel->op).output_shapes(s.sizes);
  for (size_t i = 0; i < outs.size(); ++i)
    if (size_t(outs[i].numel()) * device::output_element_bytes(*s.kernel) == a.allocation_bytes)
      matches.push_back({outs.size() == 1 ? std::string("the output") : cat("output ", i), outs[i]});
  if (matches.empty() || matches.front().shape.numel() == 0) return;  // a workspace: no matrix to draw
  const Shape& shape = matches.front().shape;
  const int64_t cols = shape.rank() == 0 ? 1 : shape[shape.rank() - 1];
  const int64_t rows = shape.numel() / cols;
  const size_t element = a.allocation_bytes / size_t(shape.numel());
  std::string names;
  for (const Candidate& c : matches) names += (names.empty() ? "" : " or ") + c.name;
  ImGui::Text("as a %lld x %lld matrix (%s of %s): the elements the lanes touch", (long long)rows, (long long)cols,
              names.c_str(), s.kernel->op.c_str());
  // Square cells of at most 8 px, the whole matrix in at most (width x 160)
  // px; a touched element stays visible (2 px at least) however large the matrix.
  const float width = std::max(200.0f, ImGui::GetContentRegionAvail().x - 10), height = 160;
  const float cw = std::min({8.0f, width / float(cols), height / float(rows)}), ch = cw;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(origin, origin + ImVec2(cw * float(cols), ch * float(rows)), IM_COL32(45, 45, 55, 255));
  std::map<int64_t, std::vector<unsigned>> touched;  // element -> lanes
  for (unsigned l = 0; l < 32; ++l)
    if (a.mask >> l & 1)
      for (uintptr_t byte = a.addresses[l]; byte < a.addresses[l] + a.bytes; byte += element)
        if (byte >= a.allocation && byte < a.allocation + a.allocation_bytes)
          touched[int64_t((byte - a.allocation) / element)].push_back(l);
  for (const auto& [index, lanes] : touched) {
    const ImVec2 p = origin + ImVec2(cw * float(index % cols), ch * float(index / cols));
    const ImVec2 q = p + ImVec2(std::max(cw, 2.0f), std::max(ch, 2.0f));
    draw->AddRectFilled(p, q, colour(layout::kTouchedElement));
    if (ImGui::IsMouseHoveringRect(p, q)) {
      std::string text;
      for (unsigned l : lanes) text += (text.empty() ? "" : ", ") + std::to_string(l);
      ImGui::SetTooltip("element (%lld, %lld): lane %s", (long long)(index / cols), (long long)(index % cols),
                        text.c_str());
    }
  }
  ImGui::Dummy(ImVec2(cw * float(cols), ch * float(rows) + 4));
}

void StepperPanel::draw_source(const RecordedStop& stop) {
  // The current line: the first active lane's; lines other live lanes wait at, dimmer.
  std::string where;
  std::set<int> others;
  for (unsigned l = 0; l < stop.warp.lanes.size(); ++l) {
    const LaneView& v = stop.warp.lanes[l];
    if (v.where.empty()) continue;
    if (where.empty() && cell_of(stop, l) == Cell::active) where = v.where;
  }
  const auto [file, line] = file_line(where);
  for (const LaneView& v : stop.warp.lanes)
    if (const auto [f, n] = file_line(v.where); f == file && n != line && n > 0) others.insert(n);
  const float top = ImGui::GetWindowPos().y + ImGui::GetWindowHeight() - layout::kSourceMinHeight;
  if (ImGui::GetCursorScreenPos().y > top) {  // the pictures ran past: cover their bottom
    const float x = ImGui::GetCursorScreenPos().x;
    ImVec4 background = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
    background.w = 1;  // the style's is slightly transparent
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(x, top), ImVec2(x + ImGui::GetContentRegionAvail().x, top + 1e4f),
                                              ImGui::GetColorU32(background));
    ImGui::SetCursorScreenPos(ImVec2(x, top));
  }
  ImGui::Separator();
  ImGui::Text("%s", where.empty() ? "(no source line: the executable has no line table for this code)" : where.c_str());
  if (file != source_path_) {
    source_path_ = file;
    source_lines_.clear();
    const std::string path = file.empty() || file[0] == '/' ? file : std::string(WARPNET_SOURCE_DIR) + "/" + file;
    std::ifstream in(path);
    for (std::string text; std::getline(in, text);) source_lines_.push_back(text);
    if (source_lines_.empty() && !file.empty()) source_lines_.push_back("(cannot read " + path + ")");
    scrolled_to_ = -1;
  }
  ImGui::BeginChild("source", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  const float h = ImGui::GetTextLineHeightWithSpacing();
  if (line > 0 && line != scrolled_to_) {
    ImGui::SetScrollY(std::max(0.0f, (line - 1) * h - ImGui::GetWindowHeight() / 3));
    scrolled_to_ = line;
  }
  ImDrawList* draw = ImGui::GetWindowDrawList();
  ImGuiListClipper clipper;
  clipper.Begin(int(source_lines_.size()), h);
  while (clipper.Step())
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const int n = i + 1;
      const ImVec2 p = ImGui::GetCursorScreenPos();
      if (n == line || others.count(n))
        draw->AddRectFilled(p, p + ImVec2(ImGui::GetWindowWidth(), h),
                            n == line ? colour(layout::kCurrentLine) : colour(layout::kInactive, 110));
      ImGui::TextDisabled("%4d", n);
      ImGui::SameLine();
      ImGui::TextUnformatted(source_lines_[size_t(i)].c_str());
    }
  ImGui::EndChild();
}

}  // namespace warpnet::viz
