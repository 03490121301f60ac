// The precision panel: one matmul in every precision warpnet knows, each
// row's time and its error against float64 (device/precision_matmul.hpp: the
// inputs stored in the format, fp32 accumulation). Either from a `warpnet
// bench precision --json` record in bench/results/ (labelled with its
// machine, GPU and date) or from a live run here, on the CPU and the
// emulator (small sizes: the emulator is slow; its times are not a GPU's).
#pragma once
#include <string>
#include <vector>

#include "device/precision_matmul.hpp"
#include "visualizer/panel.hpp"
#include "visualizer/speedup_panel.hpp"

namespace warpnet::viz {

struct PrecisionOptions {
  std::string results = WARPNET_SOURCE_DIR "/bench/results";
  std::string record;    // the record shown first (file name); default: the newest precision record
  bool live = false;     // run the live table when the panel opens
  int64_t live_cpu = 256;  // live sizes: M = N = K on the CPU
  int64_t live_emu = 64;   // and on the emulator
};

// A table to show: its rows and where they came from.
struct PrecisionTable {
  std::string source;  // the record's file name, or "live run"
  std::string label;   // machine and date
  std::string gpu;     // the GPU, or why there is none
  bool has_gpu = false;
  std::string error;
  std::vector<device::precision::Row> rows;
};

// The records under `folder` that hold a "precision" table (bench/README.md),
// and those that do not parse whose names say they should (precision-*), or
// that is `named`: each shown with its error.
std::vector<PrecisionTable> load_precision_records(const std::string& folder, const std::string& named = {});
// The CPU and emulator rows of a live run at the given sizes.
PrecisionTable run_live(int64_t cpu_size, int64_t emu_size);

class PrecisionPanel : public Panel {
 public:
  explicit PrecisionPanel(PrecisionOptions options);
  void Draw() override;
  std::string failure() const override { return failure_; }

 private:
  void draw_table(const PrecisionTable& t);
  PrecisionOptions options_;
  std::string failure_;  // the table it opened on could not be read or run
  std::vector<PrecisionTable> tables_;  // the records, then live runs
  size_t selected_ = 0;
};

}  // namespace warpnet::viz
