// Taking launches out of a profile: with a profiler that waits to be told
// (ncu --profile-from-start off, scripts/gpu-check.sh's ncu phases), only
// launches between cudaProfilerStart and cudaProfilerStop are collected.
// warpnet starts profiling at its first GPU probe and pauses it around work
// that is not the workload: a tuner's timing launches, a check at the test
// sizes. Pauses nest (a tuner runs inside a check), so they are counted
// across the process: profiling resumes when the outermost one ends, not the
// innermost. gpu::ProfilerPause (runtime.cu, for g++ code) and
// gpu_timing::ProfilerPaused (the CUDA copy of the kernels) both come here.
// Without a profiler these calls do nothing.
#pragma once
#if !defined(__CUDACC__)
#error "device/cuda/profiler_pauses.cuh is for nvcc-compiled code only"
#endif
#include <cuda_profiler_api.h>

#include <atomic>

namespace warpnet::device::gpu {

// The pauses open in this process: one counter however many translation
// units include this (a function's static in an inline function).
inline std::atomic<int>& open_profiler_pauses() {
  static std::atomic<int> open{0};
  return open;
}

inline void pause_profiler() {
  if (open_profiler_pauses().fetch_add(1) == 0) cudaProfilerStop();
}
inline void resume_profiler() {
  if (open_profiler_pauses().fetch_sub(1) == 1) cudaProfilerStart();
}
// Profiling on, unless a pause is open (it starts when that one ends).
inline void start_profiler() {
  if (open_profiler_pauses().load() == 0) cudaProfilerStart();
}

}  // namespace warpnet::device::gpu
