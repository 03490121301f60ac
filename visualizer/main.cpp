// warpnet-viz: the visualizer. Panels: the kernel stepper (a registered
// kernel, traced, one warp stepped stop by stop), memory (bytes by tag per
// layer of a training step), precision (each format's time and error), speed-up
// (the benchmark records). See README.md.
//
//   warpnet-viz                                   # a window (needs a display)
//   xvfb-run -a warpnet-viz --screenshot out.png --panel stepper --kernel matmul/03_smem_tiled --sizes 64,64,64
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "cli/validators.hpp"
#include "visualizer/app.hpp"
#include "visualizer/memory_panel.hpp"
#include "visualizer/precision_panel.hpp"
#include "visualizer/speedup_panel.hpp"
#include "visualizer/stepper_panel.hpp"

using namespace warpnet::viz;
using warpnet::cli::whole_in_range;  // not CLI::Range, which takes 0x1f for 31

int main(int argc, char** argv) {
  AppOptions app;
  StepperOptions stepper;
  MemoryOptions memory;
  PrecisionOptions precision;
  SpeedupOptions speedup;
  std::string size = "1280x800";

  CLI::App cli{"warpnet-viz: step kernels warp by warp, see where memory goes, read the benchmark records"};
  cli.add_option("--panel", app.panel, "The panel shown: stepper, memory, precision, speedup")
      ->check(CLI::IsMember({"stepper", "memory", "precision", "speedup"}));
  cli.add_option("--screenshot", app.screenshot, "Render headless, write this PNG and exit (run under xvfb-run)")
      ->check(warpnet::cli::kOutputPath);
  cli.add_option("--size", size, "Window size WxH (default 1280x800)");
  cli.add_option("--frames", app.frames, "Frames rendered before the screenshot (default 3)")
      ->check(whole_in_range(1, 100000));
  cli.add_flag("--fps", app.print_fps, "Render --frames frames and print frames per second");
  auto* s = cli.add_option_group("stepper", "Kernel stepper");
  s->add_option("--kernel", stepper.kernel, "Kernel id (matmul/03_smem_tiled), op/version or name")->capture_default_str();
  s->add_option("--sizes", stepper.sizes, "Problem sizes, comma-separated (matmul: M,N,K)")->capture_default_str();
  s->add_option("--block", stepper.block, "The watched block: x,y,z")->capture_default_str();
  s->add_option("--warp", stepper.warp, "The watched warp of the block")->check(whole_in_range(0, 31))->capture_default_str();
  s->add_option("--steps", stepper.steps, "Stops to advance after opening (default 1)")->check(whole_in_range(1, 1000000));
  s->add_option("--launches", stepper.launches, "Then launches to skip to, for an op of several (default 0)")
      ->check(whole_in_range(0, 1000));
  s->add_flag("--fragments", stepper.fragments, "Show which lane holds which tensor-core fragment element");
  s->add_flag("--step-every-frame", stepper.step_every_frame, "Advance one stop per frame (with --fps)");
  auto* m = cli.add_option_group("memory", "Memory");
  m->add_option("--model", memory.model, "lenet5, alexnet or mlp")
      ->check(CLI::IsMember({"lenet5", "alexnet", "mlp"}))
      ->capture_default_str();
  m->add_option("--batch", memory.batch, "Batch size")->check(whole_in_range(1, 4096))->capture_default_str();
  m->add_option("--optimizer", memory.optimizer, "sgd or adam")
      ->check(CLI::IsMember({"sgd", "adam"}))
      ->capture_default_str();
  m->add_option("--precision", memory.precision,
                "fp32, tf32, bf16, fp16, fp8 (mixed precision, as `warpnet train --precision`) or f64")
      ->check(CLI::IsMember({"fp32", "tf32", "bf16", "fp16", "fp8", "f64"}))
      ->capture_default_str();
  auto* p = cli.add_option_group("precision", "Precision");
  p->add_option("--precision-record", precision.record, "The precision record shown first (file name in bench/results)");
  p->add_flag("--live", precision.live, "Run the live CPU + emulator table when the panel opens");
  p->add_option("--live-cpu", precision.live_cpu, "Live run: M = N = K on the CPU (default 256)")->check(whole_in_range(16, 2048));
  p->add_option("--live-emu", precision.live_emu, "Live run: M = N = K on the emulator (default 64)")->check(whole_in_range(16, 256));
  auto* b = cli.add_option_group("speedup", "Speed-up");
  b->add_option("--results", speedup.results,
                "Folder of benchmark records, for the speed-up and precision panels (default: the source tree's "
                "bench/results)")
      ->check(CLI::ExistingDirectory);
  b->add_option("--record", speedup.record, "The record shown first (file name; default: the newest with a GPU part, by its date)");
  CLI11_PARSE(cli, argc, argv);
  precision.results = speedup.results;
  // A record named that is not there would open the panel on another one, without a word.
  // (The error_code form: a folder that may not be read is said, not thrown.)
  for (const auto& [option, record] : {std::pair{"--record", speedup.record}, {"--precision-record", precision.record}}) {
    // The panels read the folder's *.json files and find the one named by its file name alone.
    const std::filesystem::path named(record);
    if (!record.empty() && (named.filename() != named || named.extension() != ".json")) {
      std::fprintf(stderr, "warpnet-viz: %s %s: name a record by its file name (*.json) in --results (%s); for one "
                   "elsewhere, give its folder: --results DIR %s NAME.json\n",
                   option, record.c_str(), speedup.results.c_str(), option);
      return 2;
    }
    std::error_code error;
    if (!record.empty() && !std::filesystem::is_regular_file(std::filesystem::path(speedup.results) / record, error)) {
      std::fprintf(stderr, "warpnet-viz: %s %s: %s in %s\n", option, record.c_str(),
                   error ? error.message().c_str() : "no such record", speedup.results.c_str());
      return 2;
    }
  }

  // At most 8192 a side: far past any screen, and a window past what the X
  // server or the GL driver takes fails inside them with an unclear error.
  char trailing = 0;  // "800x600junk" is not a size
  if (std::sscanf(size.c_str(), "%dx%d%c", &app.width, &app.height, &trailing) != 2 || app.width < 320 ||
      app.height < 240 ||
      app.width > 8192 || app.height > 8192) {
    std::fprintf(stderr, "warpnet-viz: --size: expected WxH, from 320x240 to 8192x8192, got '%s'\n", size.c_str());
    return 2;
  }
  if (app.panel.empty()) app.panel = "stepper";

  std::vector<PanelEntry> panels;
  panels.push_back({"stepper", "Kernel stepper", [&] { return std::make_unique<StepperPanel>(stepper); }, nullptr});
  panels.push_back({"memory", "Memory", [&] { return std::make_unique<MemoryPanel>(memory); }, nullptr});
  panels.push_back({"precision", "Precision", [&] { return std::make_unique<PrecisionPanel>(precision); }, nullptr});
  panels.push_back({"speedup", "Speed-up", [&] { return std::make_unique<SpeedupPanel>(speedup); }, nullptr});
  return run_app(app, panels);
}
