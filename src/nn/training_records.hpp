// What committed GPU training runs measured: the `{"op": "train"}` entries
// of the benchmark records under bench/results/ (`warpnet bench train`,
// scripts/gpu-check.sh). Each holds a CPU and a GPU rate measured in one run
// on one machine, and their ratio; a machine without a GPU can show those,
// labelled with the GPU and date they came from, and never estimate one.
// Read by `warpnet tour` and lesson 08.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace warpnet::nn {

struct RecordedTraining {
  std::string file;  // the record's file name
  std::string gpu;   // the record's GPU name
  std::string date;  // the record's ISO date, e.g. "2026-12-04T12:02:11Z"
  std::string cpu;   // the record's CPU model
  std::string model;
  int64_t batch_size = 0;
  int cpu_threads = 0;
  double cpu_images_per_second = 0, gpu_images_per_second = 0;
  double speedup = 0;  // the record's gpu_speedup_over_cpu
};

struct RecordedTrainings {
  std::vector<RecordedTraining> entries;  // in file-name order, then as each record lists them
  int cpu_only = 0;                       // train entries with no GPU rate (a run without a GPU)
};

// Every train entry with both rates in the .json files of `results` that
// parse; none when the folder is missing.
RecordedTrainings recorded_trainings(const std::filesystem::path& results);

// The entries for `model` of the record with the latest date among them
// (records' dates order the runs; their file names need not).
std::vector<RecordedTraining> newest_for_model(const RecordedTrainings& recorded, const std::string& model);

}  // namespace warpnet::nn
