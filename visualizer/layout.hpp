// Where things sit on screen and what colour they are. Fixed on purpose: the
// headless tests (tests/check_png.cpp) include this header and sample the
// stepper's 32 lane cells at the centres given here, so a screenshot can be
// checked for "32 active lanes" without image recognition.
//
// Pixel coordinates are from the top-left corner of the frame. Nothing here
// depends on Dear ImGui, so the checker builds without it.
#pragma once
#include <cstdint>

namespace warpnet::viz::layout {

// The strip at the top with the panel chooser; each panel fills the rest.
constexpr float kTopBarHeight = 32;

// Stepper panel: the controls on the left, the pictures on the right.
constexpr float kControlsWidth = 340;
constexpr float kPicturesX = kControlsWidth + 12;

// The lane grid of the watched warp: 8 columns × 4 rows, lane l at column
// l % 8, row l / 8.
constexpr int kLaneColumns = 8;
constexpr float kLaneGridX = kPicturesX;
constexpr float kLaneGridY = kTopBarHeight + 34;
constexpr float kLaneCellWidth = 46, kLaneCellHeight = 26, kLaneCellGap = 4;

struct Point {
  float x, y;
};
constexpr Point lane_cell_centre(int lane) {
  return {kLaneGridX + (lane % kLaneColumns) * (kLaneCellWidth + kLaneCellGap) + kLaneCellWidth / 2,
          kLaneGridY + (lane / kLaneColumns) * (kLaneCellHeight + kLaneCellGap) + kLaneCellHeight / 2};
}
constexpr float kLaneGridHeight = 4 * (kLaneCellHeight + kLaneCellGap);
constexpr float kLaneGridWidth = kLaneColumns * (kLaneCellWidth + kLaneCellGap);

struct Rgb {
  uint8_t r, g, b;
};
// Lane cells. Active: the lane takes part in the access shown (or waits at the
// barrier shown). Inactive: a live lane elsewhere (divergence). Exited: done.
constexpr Rgb kActive{64, 178, 82};
constexpr Rgb kInactive{118, 118, 118};
constexpr Rgb kExited{52, 52, 58};
// Shared-memory banks: one word per bank (no conflict), more (conflict).
constexpr Rgb kBankOne{64, 178, 82};
constexpr Rgb kBankConflict{214, 66, 54};
constexpr Rgb kBankIdle{48, 48, 54};
// Sectors of a global access, and the highlighted source line.
constexpr Rgb kSector{70, 110, 180};
// The elements of a buffer a global access touches (the stepper's matrix picture).
constexpr Rgb kTouchedElement{240, 150, 60};
constexpr Rgb kCurrentLine{120, 96, 24};
// The source pane keeps at least this height at the window's bottom: a tall
// picture (tensor-core fragments, a 32-sector access) is cut under it, not it.
constexpr float kSourceMinHeight = 240;

// Precision panel: the bars of each row's error and time.
constexpr Rgb kPrecisionError{200, 90, 160};
constexpr Rgb kPrecisionTime{70, 160, 200};

// Tensor-core fragments (fragment_view.hpp): the A, B and C/D matrices of
// the instruction, left to right below the lane grid, each element a cell
// filled with the colour of the lane that holds it.
constexpr float kFragmentY = kLaneGridY + kLaneGridHeight + 30;
constexpr float kFragmentGap = 28;
// 16 px cells when the tallest matrix has 16 rows (m16n8k16, wmma), 9 px for 32 (m16n8k32's B).
constexpr float fragment_cell(int tallest_rows) { return tallest_rows <= 16 ? 16 : 9; }
// The centre of element (row, col) of matrix `m` (0: A, 1: B, 2: C), the
// matrices' column counts given (their rows do not move anything).
constexpr Point fragment_cell_centre(const int (&columns)[3], float cell, int m, int row, int col) {
  float x = kPicturesX;
  for (int i = 0; i < m; ++i) x += columns[i] * cell + kFragmentGap;
  return {x + col * cell + cell / 2, kFragmentY + row * cell + cell / 2};
}

// A lane's colour in the fragments: the hue says its groupID (lane / 4: the
// row it holds in A and C), the shade its threadID_in_group (lane % 4: the
// column pair), the two numbers the PTX ISA's layouts are written in.
constexpr Rgb kGroupHues[8] = {{230, 80, 70},  {240, 160, 50}, {220, 220, 70}, {90, 200, 80},
                               {70, 200, 200}, {80, 130, 240}, {170, 100, 240}, {240, 110, 190}};
constexpr Rgb lane_colour(int lane) {
  constexpr int shade[4] = {100, 78, 58, 40};  // percent of the hue
  const Rgb h = kGroupHues[(lane / 4) % 8];
  const int k = shade[lane % 4];
  return {uint8_t(h.r * k / 100), uint8_t(h.g * k / 100), uint8_t(h.b * k / 100)};
}

}  // namespace warpnet::viz::layout
