// `warpnet bench`: what its two halves share. cmd_bench.cpp is the command
// (the CPU half, the table, the JSON record); bench_gpu.cpp is the GPU half,
// run in a worker process so that a kernel that faults or hangs costs only
// itself: the command records it and starts a new worker for the rest.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "device/cuda/gpu.hpp"
#include "device/registry.hpp"

namespace warpnet::cli::bench {

struct Settings {
  int runs = 20;          // most timed runs per version (the median is reported)
  int min_runs = 3;       // fewest, however long a run takes
  double budget_s = 2.0;  // stop timing a version after this much timed kernel time
  double timeout_s = 60;  // a launch still running after this is reported hung
  uint64_t seed = 1;
  int threads = 0;  // CPU threads (0: all)
};

struct Deviation {
  double relative = 0;    // ‖got − ref‖ / ‖ref‖, NaN when anything is not finite
  int64_t not_finite = 0;  // NaN/inf elements in got: unwritten (poison) or overflowed
};
// Over an op's outputs: the worst output's relative deviation, and the
// non-finite elements of all of them.
Deviation deviation(const std::vector<Tensor>& got, const std::vector<Tensor>& ref);

// Median, min and max of timed runs, in ms.
nlohmann::json timing_json(std::vector<double> ms);

// "fp32", "fp16", "bf16", "e4m3", "e5m2": the format a kernel reads its inputs in.
std::string input_format_name(const device::Kernel& kernel);

// The device's peak rate for inputs in `format` (input_format_name: fp32 on
// the FP32 lanes, fp16/bf16 and e4m3/e5m2 on the dense tensor cores), with
// its basis in words: {"tflops": 66.9, "basis": "..."}, or a null rate and
// why when the table has no entry (bench_table.cpp).
nlohmann::json peak(const device::gpu::Info& info, const std::string& format);

nlohmann::json info_json(const device::gpu::Info& info);

// The GPU half for one op and size, in this process: version 0 (the vendor
// library) of each input format first, checked against the CPU reference at
// the op's test sizes; then every kernel checked (test sizes, and the bench
// size against the CPU or its version 0) and timed. Writes one JSON line per
// event to `out_path` ({"type": "start"|"result"|"check"|"device"}). Returns
// the exit code: 0, or 3 when the CUDA context was lost.
int gpu_worker(const std::string& op, const device::Sizes& sizes, const std::vector<std::string>& kernel_ids,
               const Settings& settings, const std::string& out_path);

// The GPU half as the command runs it (bench_workers.cpp): `kernels` in
// worker processes running gpu_worker, a new worker after one that faults
// or hangs (its kernel recorded as failed) until each has a result.
// Returns {"device", "copy", "kernels": one row per kernel}.
nlohmann::json gpu_half(const std::string& op, const device::Sizes& sizes,
                        const std::vector<const device::Kernel*>& kernels, const Settings& settings);

// The CPU half (bench_cpu.cpp): the op's fp32 CPU path (warpnet's version
// 0: Eigen for matmul) and, where the build found one, a peer library
// (OpenBLAS), each the median of timed runs after a last-level-cache flush.
nlohmann::json cpu_half(const device::Op& op, const device::Sizes& sizes, const Settings& settings);

// Adds to each GPU row (bench_table.cpp): TFLOP/s, % of version 0 of its
// formats, % of peak, the speed-up over the CPU and, from the least bytes the
// op moves, GB/s and % of the in-run copy rate.
void add_ratios(nlohmann::json& gpu, const device::gpu::Info& info, const nlohmann::json& cpu, double flops);
// The table of one op and size on screen, GPU rows then CPU rows.
void print_table(const nlohmann::json& record, double flops);

// One kernel of a bench as the worker bookkeeping sees it: its id, version
// and formats ("bf16->fp32": input_format_name, then the output format).
struct Entry {
  std::string id;
  int version = 0;
  std::string formats;
};
// Whether a row's output passed its check with the context kept (its
// timing may still have failed): what makes a version 0 a yardstick.
bool output_checked(const nlohmann::json& row);
// What a new worker runs first, after one that faulted or hung
// (bench_yardsticks.cpp): for each format pair that still has kernels in
// `todo` (in registry order, as `kernels`), the first version 0 whose row in
// `results` has an output that passed its check, with the context kept, and
// whose re-run is not in `rerun_failed`. The checks at large sizes compare
// with its output; without it they see only that every element is finite.
std::vector<std::string> yardsticks_to_rerun(const std::vector<Entry>& kernels,
                                             const std::map<std::string, nlohmann::json>& results,
                                             const std::vector<std::string>& todo,
                                             const std::set<std::string>& rerun_failed);

// `warpnet bench train`: which model, at what batch, over how many images.
struct TrainSettings {
  std::string model = "lenet5";
  int64_t batch = 64;
  int64_t images = 8192;
  // An epoch shorter than this is timed in groups of epochs lasting about
  // as long (bench_train.cpp); 0: every epoch alone, as a profiler wants.
  double min_timed_seconds = 1.0;
};

// Training images/s of `model` on the CPU and, when `info` says a GPU is
// usable, on it (Device::cuda, the best kernels; with a graph, without, and
// without folding bias and ReLU), with the speed-ups: one record entry
// ({"op": "train", ...}). Prints a short table.
nlohmann::json bench_train(const TrainSettings& train, const Settings& settings, const device::gpu::Info& info);

// Adds to bench_train's entry `rec` what it leaves for a second pass, on a
// usable GPU only: LeNet-5's fused step, eager and as programmatic
// dependent launches, and the launch floor under the graphed step. Prints
// them.
void bench_train_beyond(nlohmann::json& rec, const TrainSettings& train, const Settings& settings,
                        const device::gpu::Info& info);

// The head of every bench record: machine_record() (cpu, host, date), the
// benchmark's name, warpnet's build, hardware threads, the GPU (or why
// there is none), NVIDIA_TF32_OVERRIDE and the seed.
nlohmann::json record_header(const device::gpu::Info& info, uint64_t seed);

// `warpnet bench precision` (bench_precision.cpp): one matmul in every
// precision on every backend, error against float64 and time
// (device/precision_matmul.hpp).
struct PrecisionSettings {
  std::string size;                     // "M,N,K" for every backend; empty: each backend's default
  std::string emu_size, gpu_size;       // one backend's size, over `size`
  std::vector<std::string> precisions;  // empty: all
  std::vector<std::string> backends;    // of cpu, emu, cuda; empty: all
  bool trans_b = false;                 // B stored (N,K): C = A·Bᵀ (device::precision::Options)
};
// Prints the table (and the GPU throughput ratios when there are GPU rows);
// writes the record to `json_path` unless it is empty. Returns the record.
nlohmann::json bench_precision(const PrecisionSettings& precision, const Settings& settings,
                               const std::string& json_path);

}  // namespace warpnet::cli::bench
