#include "visualizer/app.hpp"

#include <GLFW/glfw3.h>  // also declares OpenGL 1.x (glReadPixels)
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <stb_image_write.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace warpnet::viz {

void help_marker(const char* text) {
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 35.0f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

void warning_text(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(240, 180, 60, 255));
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

namespace {

std::string glfw_error;
void on_glfw_error(int, const char* description) { glfw_error = description; }

// What every PNG begins with: --screenshot replaces only a PNG (or an empty file).
constexpr FileKind kPngFile{"a PNG image", "\x89PNG"};

// The back buffer of the frame just rendered, top row first, as RGB PNG,
// written whole or not at all; throws, naming the file and why, when it cannot be.
void save_png(const std::string& path, int width, int height) {
  std::vector<unsigned char> pixels(size_t(width) * height * 3);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, pixels.data());
  stbi_flip_vertically_on_write(1);  // OpenGL's rows run bottom-up
  std::string png;
  const auto append = [](void* to, void* data, int size) { static_cast<std::string*>(to)->append(static_cast<char*>(data), size_t(size)); };
  WN_CHECK(stbi_write_png_to_func(append, &png, width, height, 3, pixels.data(), width * 3) != 0, path,
           ": the PNG encoder failed (", width, "x", height, ")");
  write_file_atomically(path, png);
}

// The strip at the top: one button per panel, the shown one highlighted.
void draw_chooser(std::vector<PanelEntry>& panels, size_t& shown, float width) {
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(width, layout::kTopBarHeight));
  ImGui::Begin("##chooser", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                         ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus);
  ImGui::TextUnformatted("warpnet-viz");
  for (size_t i = 0; i < panels.size(); ++i) {
    ImGui::SameLine();
    const bool on = i == shown;
    if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
    if (ImGui::Button(panels[i].title.c_str())) shown = i;
    if (on) ImGui::PopStyleColor();
  }
  ImGui::End();
}

}  // namespace

int run_app(const AppOptions& o, std::vector<PanelEntry>& panels) {
  size_t shown = 0;
  for (size_t i = 0; i < panels.size(); ++i)
    if (o.panel == panels[i].name) shown = i;
  const bool headless = !o.screenshot.empty();
  if (headless) {
    try {  // before the panel runs: a path that cannot be written fails now, not after it
      prepare_output_file(o.screenshot, "--screenshot", kPngFile);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "warpnet-viz: %s\n", e.what());
      return 2;
    }
  }

  glfwSetErrorCallback(on_glfw_error);
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if ((!display || !*display) && (!wayland || !*wayland)) {
    std::fprintf(stderr, "warpnet-viz: no display: run under xvfb-run (xvfb-run -a warpnet-viz ...)\n");
    return 2;
  }
  if (!glfwInit()) {
    std::fprintf(stderr, "warpnet-viz: no display: run under xvfb-run (GLFW: %s)\n", glfw_error.c_str());
    return 2;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  // Headless: the window is never shown; the frame is read from its back buffer.
  glfwWindowHint(GLFW_VISIBLE, headless ? GLFW_FALSE : GLFW_TRUE);
  glfwWindowHint(GLFW_RESIZABLE, headless ? GLFW_FALSE : GLFW_TRUE);
  GLFWwindow* window = glfwCreateWindow(o.width, o.height, "warpnet-viz", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "warpnet-viz: cannot open an OpenGL 3.3 window: %s\n", glfw_error.c_str());
    glfwTerminate();
    return 2;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(headless || o.print_fps ? 0 : 1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini: every start (and every screenshot) looks the same
  ImGui::StyleColorsDark();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");

  int code = 0;
  // Timed from the second frame: the first builds the panel (runs a kernel, measures a step).
  auto start = std::chrono::steady_clock::now();
  int frame = 0;
  for (; !glfwWindowShouldClose(window); ++frame) {
    if (o.frames > 0 && (headless || o.print_fps) && frame >= o.frames) break;
    if (frame == 1) start = std::chrono::steady_clock::now();
    glfwPollEvents();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    int width = 0, height = 0;
    glfwGetFramebufferSize(window, &width, &height);

    draw_chooser(panels, shown, float(width));
    ImGui::SetNextWindowPos(ImVec2(0, layout::kTopBarHeight));
    ImGui::SetNextWindowSize(ImVec2(float(width), float(height) - layout::kTopBarHeight));
    PanelEntry& entry = panels[shown];
    if (!entry.panel) entry.panel = entry.make();
    ImGui::Begin(entry.title.c_str(), nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoBringToFrontOnFocus);
    entry.panel->Draw();
    ImGui::End();

    ImGui::Render();
    glViewport(0, 0, width, height);
    glClearColor(0.08f, 0.08f, 0.10f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (headless && frame == o.frames - 1) {
      if (!entry.panel->failure().empty()) {  // the panel printed it when it failed
        std::fprintf(stderr, "warpnet-viz: the %s panel shows an error (above); exit status 1\n", entry.name.c_str());
        code = 1;  // the screenshot is still written: it shows the error as a user sees it
      }
      try {
        save_png(o.screenshot, width, height);
        std::printf("warpnet-viz: wrote %s (%dx%d, panel %s)\n", o.screenshot.c_str(), width, height,
                    entry.name.c_str());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "warpnet-viz: cannot write the screenshot: %s\n", e.what());
        code = 1;
      }
    }
    glfwSwapBuffers(window);
  }
  if (o.print_fps) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("warpnet-viz: %d frames after the first in %.3f s: %.1f frames per second\n", frame - 1, s,
                (frame - 1) / s);
  }

  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return code;
}

}  // namespace warpnet::viz
