// What the autotuners (matmul/10, conv2d/07, conv2d_dgrad/03) share on a real GPU: device
// buffers freed on every path, a pair of CUDA events, and the mean time of
// one launch. The CUDA copy of the registrations alone includes it (nvcc);
// the emulator's copies have no autotuner. Errors throw Error as
// "<who>: <what> failed: <CUDA name>: <CUDA string>", `who` naming the tuner.
#pragma once
#if !defined(__CUDACC__)
#error "device/kernels/gpu_timing.hpp is for the CUDA copy of the registrations (nvcc) only"
#endif
#include <cuda_profiler_api.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace warpnet::device::gpu_timing {

inline void check(cudaError_t error, const char* who, const char* what) {
  if (error != cudaSuccess) fail(who, ": ", what, " failed: ", cudaGetErrorName(error), ": ", cudaGetErrorString(error));
}

// n floats of device memory, freed on every path.
struct DeviceFloats {
  float* p = nullptr;
  DeviceFloats(size_t n, const char* who) { check(cudaMalloc(&p, n * sizeof(float)), who, "cudaMalloc"); }
  ~DeviceFloats() { cudaFree(p); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
};

struct EventPair {
  const char* who;
  cudaEvent_t start = nullptr, stop = nullptr;
  explicit EventPair(const char* who_) : who(who_) {
    check(cudaEventCreate(&start), who, "cudaEventCreate");
    check(cudaEventCreate(&stop), who, "cudaEventCreate");
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
};

// While a tuner runs, a profiler attached to the process (Nsight Compute in
// scripts/gpu-check.sh's ncu phase) collects nothing: its hundreds of timing
// launches are not the workload. cudaProfilerStop/Start do nothing when no
// profiler is attached.
struct ProfilerPaused {
  ProfilerPaused() { cudaProfilerStop(); }
  ~ProfilerPaused() { cudaProfilerStart(); }
  ProfilerPaused(const ProfilerPaused&) = delete;
  ProfilerPaused& operator=(const ProfilerPaused&) = delete;
};

// Milliseconds per launch of `launch`, averaged over enough launches for ~20 ms.
template <class Launcher>
double time_launches(const EventPair& ev, Launcher launch) {
  auto run = [&](int reps) {
    check(cudaEventRecord(ev.start), ev.who, "cudaEventRecord");
    for (int r = 0; r < reps; ++r) launch();
    check(cudaGetLastError(), ev.who, "a timed launch");
    check(cudaEventRecord(ev.stop), ev.who, "cudaEventRecord");
    check(cudaEventSynchronize(ev.stop), ev.who, "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, ev.start, ev.stop), ev.who, "cudaEventElapsedTime");
    return double(ms) / reps;
  };
  const double once = run(1);
  return run(std::clamp(int(20.0 / std::max(once, 1e-3)), 3, 200));
}

// Every candidate of a tuner timed on one problem: launch(i) launches
// candidate i. A warm-up launch each, which also finds launches this GPU
// refuses (an invalid grid, too many resources: NaN in the result, e.g. a
// grid past 65535 blocks in y), then time_launches. Returns each
// candidate's milliseconds; `best` is the fastest one's index, -1 when
// none could be launched (the caller says at what).
template <class LaunchCandidate>
std::vector<double> time_candidates(int count, const EventPair& ev, LaunchCandidate launch, int& best) {
  std::vector<double> ms;
  best = -1;
  for (int i = 0; i < count; ++i) {
    launch(i);
    const cudaError_t error = cudaGetLastError();
    if (error == cudaErrorInvalidConfiguration || error == cudaErrorLaunchOutOfResources) {
      ms.push_back(std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    check(error, ev.who, "a warm-up launch");
    check(cudaDeviceSynchronize(), ev.who, "a warm-up run");
    ms.push_back(time_launches(ev, [&] { launch(i); }));
    if (best < 0 || ms.back() < ms[best]) best = i;
  }
  return ms;
}

// "<name> <ms> ms, <name> refused, ...": each candidate's time, for the record.
template <class NameOf>
std::string describe_times(const std::vector<double>& ms, NameOf name_of) {
  std::string all;
  for (size_t i = 0; i < ms.size(); ++i)
    all += cat(i ? ", " : "", name_of(int(i)), " ", std::isnan(ms[i]) ? std::string("refused") : cat(ms[i], " ms"));
  return all;
}

}  // namespace warpnet::device::gpu_timing
