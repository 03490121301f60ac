// The application shell: a GLFW window with an OpenGL 3.3 core context, Dear
// ImGui on top, the panel chooser, and the headless mode that renders frames
// and saves the last one as a PNG (glReadPixels + stb_image_write).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "visualizer/panel.hpp"

namespace warpnet::viz {

struct AppOptions {
  int width = 1280, height = 800;
  std::string panel;       // the panel shown first (its name())
  std::string screenshot;  // non-empty: headless, write this PNG and exit
  int frames = 3;          // frames rendered before the screenshot (ImGui settles sizes over two)
  bool print_fps = false;  // print frames per second at exit (with --frames, for measuring)
};

// A panel of the chooser, built the first time it is shown (the memory panel
// measures a training step when built, the stepper runs a kernel).
struct PanelEntry {
  std::string name, title;  // "stepper", "Kernel stepper"
  std::function<std::unique_ptr<Panel>()> make;
  std::unique_ptr<Panel> panel;
};

// Runs until the window closes (or, with a screenshot, after `frames`
// frames). Returns the process exit code; prints why on failure ("no
// display: run under xvfb-run").
int run_app(const AppOptions& options, std::vector<PanelEntry>& panels);

}  // namespace warpnet::viz
