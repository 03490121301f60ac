#include "visualizer/fragment_view.hpp"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "simt/minifloat.hpp"
#include "visualizer/panel.hpp"

namespace warpnet::viz {

namespace {

using simt::RowCol;

// Element i of a lane is the ISA's a_i / b_i / c_i (two 16-bit elements, or
// four e4m3 bytes, to a 32-bit register, the lower index in the low half).
constexpr FragmentShape kShapes[] = {
    {"wmma", "wmma::mma_sync m16n16k16 (warpnet's layout: two m16n8k16 side by side)",
     {"A (m x k)", 16, 16, 8, [](unsigned l, int i) { return simt::wmma_a_element(l, i); }},
     {"B (k x n)", 16, 16, 8, [](unsigned l, int i) { return simt::wmma_b_element(l, i); }},
     {"C, D (m x n)", 16, 16, 8, [](unsigned l, int i) { return simt::wmma_c_element(l, i); }}},
    {"m16n8k16", "mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}",
     {"A (m x k)", 16, 16, 8, [](unsigned l, int i) { return simt::mma_a_element(l, i); }},
     {"B (k x n)", 16, 8, 4, [](unsigned l, int i) { return simt::mma_b_element(l, i); }},
     {"C, D (m x n)", 16, 8, 4, [](unsigned l, int i) { return simt::mma_c_element(l, i); }}},
    {"m16n8k32", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
     {"A (m x k)", 16, 32, 16, [](unsigned l, int i) { return simt::mma_a8_element(l, i); }},
     {"B (k x n)", 32, 8, 8, [](unsigned l, int i) { return simt::mma_b8_element(l, i); }},
     {"C, D (m x n)", 16, 8, 4, [](unsigned l, int i) { return simt::mma_c_element(l, i); }}},
};

// owner[row * cols + col] = lane * 64 + i: who holds each element; -1 if no
// lane does (a layout bug: drawn in white, so a test would see it).
std::vector<int> owners(const FragmentMatrix& m) {
  std::vector<int> owner(size_t(m.rows * m.cols), -1);
  for (unsigned lane = 0; lane < 32; ++lane)
    for (int i = 0; i < m.per_lane; ++i) {
      const RowCol e = m.element(lane, i);
      if (e.row >= 0 && e.row < m.rows && e.col >= 0 && e.col < m.cols)
        owner[size_t(e.row * m.cols + e.col)] = int(lane) * 64 + i;
    }
  return owner;
}

ImVec2 operator+(ImVec2 a, ImVec2 b) { return {a.x + b.x, a.y + b.y}; }

}  // namespace

const FragmentShape* fragment_shape(const std::string& id) {
  for (const FragmentShape& s : kShapes)
    if (id == s.id) return &s;
  return nullptr;
}

const FragmentShape* fragment_shape_of(const device::Kernel& k) {
  using Op = device::Kernel::TensorOp;
  if (k.tensor_op == Op::wmma) return fragment_shape("wmma");
  if (k.tensor_op != Op::mma_sync) return nullptr;  // none, or wgmma: no lane holds A and B
  return fragment_shape(k.input_format == &simt::kE4M3 ? "m16n8k32" : "m16n8k16");
}

std::string no_fragments_reason(const device::Kernel& k) {
  if (k.tensor_op == device::Kernel::TensorOp::wgmma)
    return k.id() + " issues wgmma: A and B come from shared memory through descriptors, so no lane holds them; "
                    "no fragments to show";
  return k.id() + " issues no tensor-core instruction: no fragments to show";
}

void draw_fragments(const FragmentShape& shape) {
  const FragmentMatrix* matrices[3] = {&shape.a, &shape.b, &shape.c};
  const int columns[3] = {shape.a.cols, shape.b.cols, shape.c.cols};
  const float cell = layout::fragment_cell(std::max({shape.a.rows, shape.b.rows, shape.c.rows}));
  ImDrawList* draw = ImGui::GetWindowDrawList();
  ImGui::SetCursorScreenPos(ImVec2(layout::kPicturesX, layout::kFragmentY - 20));
  ImGui::Text("Fragments of %s: each element in the colour of the lane holding it", shape.instruction);
  ImGui::SameLine();
  help_marker("Hue: the lane's groupID (lane / 4), the row it holds in A and C. Shade: its threadID_in_group "
              "(lane % 4), the pair of columns. The layouts are the emulator's (simt/tensor_cores.hpp), written "
              "from the PTX ISA's 'Matrix Fragments for mma.m16n8k16 / m16n8k32' figures; wmma's, which CUDA "
              "leaves open, is two m16n8k16 side by side. Hover an element: its lane and register.");

  // The hovered element's lane: all its elements outlined, in every matrix.
  int hovered_lane = -1;
  std::vector<int> owner[3];
  for (int m = 0; m < 3; ++m) {
    owner[m] = owners(*matrices[m]);
    for (int r = 0; r < matrices[m]->rows; ++r)
      for (int c = 0; c < matrices[m]->cols; ++c) {
        const layout::Point p = layout::fragment_cell_centre(columns, cell, m, r, c);
        const ImVec2 a(p.x - cell / 2, p.y - cell / 2);
        const int o = owner[m][size_t(r * matrices[m]->cols + c)];
        if (o >= 0 && ImGui::IsMouseHoveringRect(a, a + ImVec2(cell, cell))) {
          hovered_lane = o / 64;
          ImGui::BeginTooltip();
          ImGui::Text("%c[%d][%d]: lane %d (groupID %d, threadID_in_group %d), element %c%d", "ABC"[m], r, c, o / 64,
                      o / 64 / 4, o / 64 % 4, "abc"[m], o % 64);
          ImGui::EndTooltip();
        }
      }
  }
  float bottom = layout::kFragmentY;
  for (int m = 0; m < 3; ++m) {
    const FragmentMatrix& f = *matrices[m];
    for (int r = 0; r < f.rows; ++r)
      for (int c = 0; c < f.cols; ++c) {
        const layout::Point p = layout::fragment_cell_centre(columns, cell, m, r, c);
        const ImVec2 a(p.x - cell / 2, p.y - cell / 2), z = a + ImVec2(cell - 1, cell - 1);
        const int o = owner[m][size_t(r * f.cols + c)];
        draw->AddRectFilled(a, z, o >= 0 ? colour(layout::lane_colour(o / 64)) : IM_COL32(255, 255, 255, 255));
        if (o >= 0 && o / 64 == hovered_lane) draw->AddRect(a, z, IM_COL32(255, 255, 255, 255), 0, 0, 2);
      }
    const layout::Point first = layout::fragment_cell_centre(columns, cell, m, 0, 0);
    const float x = first.x - cell / 2, y = layout::kFragmentY + f.rows * cell;
    draw->AddText(ImVec2(x, y + 2), IM_COL32(220, 220, 220, 255), f.name);
    bottom = std::max(bottom, y + 18);
  }
  // The key: the 32 lanes in their colours, as the lane grid above lays them out (8 a row).
  const layout::Point after_c = layout::fragment_cell_centre(columns, cell, 2, 0, columns[2]);
  const ImVec2 key(after_c.x - cell / 2 + layout::kFragmentGap, layout::kFragmentY);
  for (int lane = 0; lane < 32; ++lane) {
    const ImVec2 a = key + ImVec2(float(lane % 4) * 26, float(lane / 4) * 18);
    draw->AddRectFilled(a, a + ImVec2(24, 16), colour(layout::lane_colour(lane)));
    char label[8];
    std::snprintf(label, sizeof label, "%d", lane);
    draw->AddText(a + ImVec2(3, 1), IM_COL32(15, 15, 15, 255), label);
  }
  draw->AddText(key + ImVec2(0, 8 * 18 + 2), IM_COL32(220, 220, 220, 255), "lanes: a row per groupID");
  bottom = std::max(bottom, key.y + 8 * 18 + 20);
  ImGui::SetCursorScreenPos(ImVec2(layout::kPicturesX, bottom + 4));
}

}  // namespace warpnet::viz
