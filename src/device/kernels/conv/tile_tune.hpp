// The tune of conv2d_nhwc v14, v15 and v16 on a real GPU. Each has two
// tiles for the same problem (v14 and v15: two consumer warpgroups or
// three; v16: 8 rows a thread or 6), and a rule that picks one from the SM
// count by arithmetic (conv_v14::consumers_for, conv_v15::consumers_for,
// conv_v16::rows_per_thread). Here both run on
// random inputs of the sizes and are timed, and the faster is remembered:
// the measurement the rule is a guess at, in the record's "tuned" line.
// Either tile sums each output's products in the same order (tap by tap,
// the channels of a k-step in turn), so both must give the same bits; a
// second tile that does not is not timed, and the line says so. The bench
// checks the winner against cuDNN afterwards, as every kernel.
// The CUDA copy of the registrations alone includes it (nvcc); an anonymous
// namespace as the other registration headers (../copy.hpp).
#pragma once
#if !defined(__CUDACC__)
#error "device/kernels/conv/tile_tune.hpp is for the CUDA copy of the registrations (nvcc) only"
#endif
#include <cstring>
#include <string>
#include <vector>

#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/gpu_timing.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace warpnet::device::conv {
namespace {

// A version's two tiles: candidate 0 is the rule's tie-breaker (the larger
// tile), 1 the other.
struct TileCandidates {
  const char* who;                                   // "conv2d_nhwc/14's tune"
  const char* (*name)(int candidate, const Sizes&);  // "192x128, 3 consumer warpgroups"
  // Launches candidate i on x, w and y (the op's buffers); the caller checks the error.
  void (*launch)(int candidate, const Sizes&, Buffers);
};

// T: the element type of x, w and y (float, or __nv_bfloat16 for v14).
// TMA's path only: at sizes it cannot describe both candidates run the
// same direct kernel, and there is nothing to choose.
template <class T>
std::string tune_tiles(const TileCandidates& c, const Sizes& s, TunedChoices& tuned) {
  const auto name = [&](int i) { return c.name(i, s); };
  if (const auto known = tuned.find(s)) return cat("tuned before: ", name(*known));
  const ConvShape g = shape_of(s);
  if (!conv_v14::describable(g, nullptr, nullptr, int(sizeof(T)))) return "one kernel here: TMA cannot describe x or w";
  using gpu_timing::DeviceArray;
  Rng rng(2026);
  std::vector<float> host;
  DeviceArray<T> x = gpu_timing::random_on_device<T>(host, size_t(g.N) * g.H * g.W * g.C, rng, c.who);
  DeviceArray<T> w = gpu_timing::random_on_device<T>(host, size_t(g.K) * g.R * g.S * g.C, rng, c.who);
  const size_t outputs = size_t(g.N) * g.P * g.Q * g.K;
  DeviceArray<T> y(outputs, c.who);
  void* const buffers[3] = {x.p, w.p, y.p};
  const auto launch = [&](int i) { c.launch(i, s, Buffers(buffers)); };
  // Candidate i's y, poisoned first (0xFF bytes: NaN) so that an element it leaves unwritten differs.
  const auto output_of = [&](int i) {
    check_cuda(cudaMemset(y.p, 0xFF, outputs * sizeof(T)), c.who, ": cudaMemset of y");
    launch(i);
    check_cuda(cudaGetLastError(), c.who, ": a checked launch");
    gpu_timing::wait_for_launches(c.who, "a checked launch");
    std::vector<unsigned char> bytes(outputs * sizeof(T));
    check_cuda(cudaMemcpy(bytes.data(), y.p, bytes.size(), cudaMemcpyDeviceToHost), c.who, ": cudaMemcpy of y");
    return bytes;
  };
  bool same = false;
  {
    const gpu_timing::ProfilerPaused not_profiled;  // the checks are the tuner's, not the workload's
    same = output_of(0) == output_of(1);
  }
  const gpu_timing::Timed t = gpu_timing::pick_fastest(2, c.who, launch, describe_sizes(op("conv2d_nhwc"), s),
                                                       [&](int i) { return i == 0 || same; });
  tuned.remember(s, t.best);
  return cat("measured by ", c.who, ": ", name(t.best), " (", gpu_timing::describe_times(t.ms, name), ")",
             same ? "; both gave the same bits" : cat("; ", name(1), " gave other bits than ", name(0), ", not timed"));
}

}  // namespace
}  // namespace warpnet::device::conv
