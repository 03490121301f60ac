// What every panel of warpnet-viz is: a small struct with its state and a
// Draw() (the shape of Dear ImGui's own demo). The app draws the chosen one
// into the area below the panel chooser; `--panel <name>` chooses it from the
// command line (main.cpp names them), and each panel reads its own options
// from there too.
#pragma once
#include <imgui.h>

#include <string>

#include "visualizer/layout.hpp"

namespace warpnet::viz {

struct Panel {
  virtual ~Panel() = default;
  // Called once per frame while the panel is shown, inside its window.
  virtual void Draw() = 0;
  // What the panel could not show (a kernel not found, a warp that never
  // stopped), empty when nothing failed: a headless run exits non-zero on it.
  virtual std::string failure() const { return {}; }
};

// Small drawing helpers every panel uses.
inline ImU32 colour(layout::Rgb c, int alpha = 255) { return IM_COL32(c.r, c.g, c.b, alpha); }

// A "(?)" that explains a control when hovered (imgui_demo.cpp's HelpMarker).
void help_marker(const char* text);

// Text in a colour, for warnings ("no GPU part in this record").
void warning_text(const std::string& text);

}  // namespace warpnet::viz
