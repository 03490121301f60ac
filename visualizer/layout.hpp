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
constexpr Rgb kCurrentLine{120, 96, 24};

}  // namespace warpnet::viz::layout
