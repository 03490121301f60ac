// The speed-up panel: what the benchmark records in bench/results/ say —
// every kernel version's time, TFLOP/s, % of the vendor library (cuBLAS,
// cuDNN) and speed-up over the CPU, from `warpnet bench --json` records; the
// figures of the other records (CPU, emulator) as they were written. Every
// record is labelled with the GPU and the date it came from, or says it has
// no GPU part. Nothing is measured here.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "visualizer/panel.hpp"

namespace warpnet::viz {

struct SpeedupOptions {
  std::string results = WARPNET_SOURCE_DIR "/bench/results";
  std::string record;  // the record shown first (file name); default: the first GPU one, else the first
};

struct BenchRecord {
  std::string file;   // "cpu-sgemm-skylakex-vm-2026-11-30.json"
  std::string error;  // set when the file could not be read
  nlohmann::json json;
  std::string benchmark, date, machine;
  bool has_gpu = false;
  std::string gpu;  // "NVIDIA H200 (sm_90, driver ...)" or why there is no GPU part
};

// Every *.json under `folder`, sorted by name, with its labels worked out.
std::vector<BenchRecord> load_records(const std::string& folder);

class SpeedupPanel : public Panel {
 public:
  explicit SpeedupPanel(SpeedupOptions options);
  void Draw() override;
  std::string failure() const override { return failure_; }

 private:
  void draw_record(const BenchRecord& r);
  SpeedupOptions options_;
  std::string failure_;  // the record it opened on could not be read
  std::vector<BenchRecord> records_;
  size_t selected_ = 0;
};

}  // namespace warpnet::viz
