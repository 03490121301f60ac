// The real GPU, seen from plain C++: which device there is, running a
// registered kernel of the CUDA copy (Copy::cuda) once, and timing it. No CUDA
// type appears here, so g++ code (`warpnet bench`, tests/gpu) can include it
// while the emulator's own CUDA API is in the same program; the
// implementation (runtime.cu) is compiled by nvcc. Without the toolkit the
// same functions exist (no_cuda.cpp) and probe() says why there is no GPU.
//
// Every CUDA and cuBLAS call is checked; a failure throws gpu::Failure naming
// the kernel, the call and the CUDA error. Nothing waits forever: a kernel
// that runs past its time limit is reported as hung.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "device/registry.hpp"

namespace warpnet::device::gpu {

struct Info {
  bool usable = false;
  std::string why_not;  // "no usable GPU: cudaErrorInsufficientDriver: ..." when not usable
  std::string name;     // "NVIDIA H200"
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  double clock_ghz = 0;  // the peak SM clock the device reports
  int64_t l2_bytes = 0;
  double memory_gib = 0;
  double memory_free_gib = 0;  // free when probed (cudaMemGetInfo): what other processes leave
  double memory_bus_gbps = 0;  // peak DRAM bandwidth from the reported bus width and memory clock, 0 if unknown
  std::string driver, runtime, cublas;  // versions, "13.0"
};

// Asks the CUDA runtime for the current device: 0, or the one cudaSetDevice
// chose before (a data-parallel rank's own, dist::use_local_gpu). Never throws: no driver (as on CI) or
// no device is an answer, given in why_not.
Info probe();

// Every GPU the runtime can see, in device order (`warpnet info` names each
// of a multi-GPU machine's): name, compute capability, SMs and memory, no
// context made on any. None: an empty list and the reason. Never throws.
struct Listing {
  std::vector<Info> gpus;
  std::string why_none;
};
Listing list();

// A failed CUDA or cuBLAS call, or a kernel past its time limit.
// context_lost: the error is sticky (an illegal address, a hang): no later
// CUDA work in this process can succeed, so the caller must stop using the GPU.
class Failure : public Error {
 public:
  Failure(const std::string& message, bool context_lost) : Error(message), context_lost(context_lost) {}
  bool context_lost;
};

// An op's inputs on the device, encoded in one kernel's input format
// (device_bytes, run.hpp), and its output buffers. Kernels of the same op and
// input format run on the same Problem: a kernel and its vendor baseline see
// the very same inputs.
class Problem {
 public:
  // Uploads `inputs` as `kernel` reads them.
  Problem(const Kernel& kernel, const Sizes& sizes, const std::vector<Tensor>& inputs);
  ~Problem();
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  // Poisons the outputs with NaN (an element the kernel never writes cannot
  // pass a check), launches `kernel` with its registered shape and waits, at
  // most `timeout_s` seconds. Returns the seconds waited (launch included).
  // Throws Failure.
  double run(const Kernel& kernel, double timeout_s = 60);
  // The outputs as fp32, downloaded.
  std::vector<Tensor> outputs() const;

  // Times `kernel` with CUDA events around the launch alone: `warmup` untimed
  // runs, then up to `runs` timed runs, each after writing a buffer twice
  // the L2 size (so no run finds the last one's operands in L2); stops early
  // once `budget_s` of kernel time is spent, after at least `min_runs`.
  // Returns the milliseconds of each timed run. Throws Failure.
  std::vector<double> time(const Kernel& kernel, int warmup, int runs, int min_runs, double budget_s,
                           double timeout_s = 60);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The device-to-device copy rate in this process, GB/s counting each byte
// read and written (2·bytes per copy): the practical ceiling of a
// memory-bound kernel, against which `warpnet bench` rates softmax, the
// reductions and the elementwise ops. The median of `runs` cudaMemcpy's of
// `bytes` (1 GiB: far past L2), timed with CUDA events. Throws Failure.
double copy_bandwidth_gbps(size_t bytes = size_t(1) << 30, int runs = 10);

// While one lives, a profiler that waits to be told (ncu --profile-from-start
// off, scripts/gpu-check.sh's ncu phases) records no launch: `warpnet bench`
// checks each version at its op's test sizes first, and those small
// launches are not the ones a profile of the benchmarked size is after.
// Pauses nest: profiling resumes when the outermost ends (profiler_pauses.cuh,
// which the tuners' gpu_timing::ProfilerPaused shares). Does nothing without
// a profiler, or without the toolkit.
class ProfilerPause {
 public:
  ProfilerPause();
  ~ProfilerPause();
  ProfilerPause(const ProfilerPause&) = delete;
  ProfilerPause& operator=(const ProfilerPause&) = delete;
};

// One run on fresh device buffers: Problem(kernel, sizes, inputs).run(kernel) and the outputs.
std::vector<Tensor> run(const Kernel& kernel, const Sizes& sizes, const std::vector<Tensor>& inputs, double timeout_s = 60);

}  // namespace warpnet::device::gpu
