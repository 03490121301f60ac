// What the autotuners (matmul/10, and the conv versions through
// conv/conv_tune.hpp) share on a real GPU: device buffers freed on every
// path, a pair of CUDA events, the mean time of one launch, timing every
// candidate, and checking every candidate that ran.
// The CUDA copy of the registrations alone includes it (nvcc); the
// emulator's copies have no autotuner. A failed call throws CudaCallFailed
// (copy.hpp's check_cuda) as "<who>: <what> failed: <CUDA name>: <detail>",
// `who` naming the tuner;
// a launch that fails when waited for, or runs past kHungAfterSeconds,
// throws gpu::Failure (check.cuh), which says whether the context survived.
#pragma once
#if !defined(__CUDACC__)
#error "device/kernels/gpu_timing.hpp is for the CUDA copy of the registrations (nvcc) only"
#endif
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "device/cuda/check.cuh"
#include "device/cuda/profiler_pauses.cuh"
#include "device/kernels/copy.hpp"  // check_cuda
#include "kernels/common/cuda_compat.hpp"  // launch_stream()

namespace warpnet::device::gpu_timing {

// n elements of device memory, freed on every path.
template <class T>
struct DeviceArray {
  T* p = nullptr;
  DeviceArray(size_t n, const char* who) { check_cuda(cudaMalloc(&p, n * sizeof(T)), who, ": cudaMalloc"); }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(DeviceArray&& o) noexcept : p(std::exchange(o.p, nullptr)) {}
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};
using DeviceFloats = DeviceArray<float>;

struct EventPair {
  const char* who;
  cudaEvent_t start = nullptr, stop = nullptr;
  explicit EventPair(const char* who_) : who(who_) {
    check_cuda(cudaEventCreate(&start), who, ": cudaEventCreate");
    check_cuda(cudaEventCreate(&stop), who, ": cudaEventCreate");
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
// launches and the candidates' checks are not the workload
// (device/cuda/profiler_pauses.cuh; pauses nest).
struct ProfilerPaused {
  ProfilerPaused() { gpu::pause_profiler(); }
  ~ProfilerPaused() { gpu::resume_profiler(); }
  ProfilerPaused(const ProfilerPaused&) = delete;
  ProfilerPaused& operator=(const ProfilerPaused&) = delete;
};

// A tuner's launch still running after this long is taken as hung (the
// default of `warpnet bench --timeout`): gpu::wait_for (check.cuh) throws a
// Failure with the context lost rather than block the process for ever, so
// a bench worker reports the kernel and a new one goes on.
constexpr double kHungAfterSeconds = 60;

// Waits, at most `limit_s`, for every launch made so far on the stream the
// kernels launch on (launch_stream(), cuda_compat.hpp).
inline void wait_for_launches(const char* who, const char* what, double limit_s = kHungAfterSeconds) {
  gpu::wait_for_stream(launch_stream(), limit_s, cat(who, ": ", what));
}

// Milliseconds per launch of `launch`, averaged over enough launches for ~20 ms.
template <class Launcher>
double time_launches(const EventPair& ev, Launcher launch) {
  auto run = [&](int reps, double limit_s) {
    check_cuda(cudaEventRecord(ev.start, launch_stream()), ev.who, ": cudaEventRecord");
    for (int r = 0; r < reps; ++r) launch();
    check_cuda(cudaGetLastError(), ev.who, ": a timed launch");
    check_cuda(cudaEventRecord(ev.stop, launch_stream()), ev.who, ": cudaEventRecord");
    gpu::wait_for(ev.stop, limit_s, cat(ev.who, ": timed launches"));
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, ev.start, ev.stop), ev.who, ": cudaEventElapsedTime");
    return double(ms) / reps;
  };
  const double once = run(1, kHungAfterSeconds);
  const int reps = std::clamp(int(20.0 / std::max(once, 1e-3)), 3, 200);
  return run(reps, kHungAfterSeconds + 4 * reps * once * 1e-3);
}

// Every candidate of a tuner timed on one problem: launch(i) launches
// candidate i. A warm-up launch each, which also finds launches this GPU
// refuses (an invalid grid, too many resources, a workspace past the free
// memory: NaN in the result, e.g. a grid past 65535 blocks in y), then
// time_launches. A candidate that `applies` says is not one here (a split-K
// candidate that would not split: the same launch as another) is not run:
// +infinity. Returns each
// candidate's milliseconds; `best` is the fastest one's index, -1 when
// none could be launched (the caller says at what).
template <class LaunchCandidate>
std::vector<double> time_candidates(int count, const EventPair& ev, LaunchCandidate launch, int& best,
                                    const std::function<bool(int)>& applies = {}) {
  std::vector<double> ms;
  best = -1;
  for (int i = 0; i < count; ++i) {
    if (applies && !applies(i)) {
      ms.push_back(std::numeric_limits<double>::infinity());
      continue;
    }
    cudaError_t error = cudaSuccess;
    try {
      launch(i);
      error = cudaGetLastError();
    } catch (const CudaCallFailed& e) {
      // A launcher that checks its own launch (copy.hpp's check_launch, as
      // matmul/10's GEMMs do) has taken the error and thrown it; a candidate
      // whose workspace does not fit (workspace.hpp) is refused too: another
      // may need less. Any other error is the caller's to hear.
      error = e.error;
      if (error != cudaErrorInvalidConfiguration && error != cudaErrorLaunchOutOfResources &&
          error != cudaErrorMemoryAllocation)
        throw;
      (void)cudaGetLastError();  // not sticky: cleared, so the next candidate's check sees only its own
    }
    if (error == cudaErrorInvalidConfiguration || error == cudaErrorLaunchOutOfResources ||
        error == cudaErrorMemoryAllocation) {
      ms.push_back(std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    check_cuda(error, ev.who, ": a warm-up launch");
    wait_for_launches(ev.who, "a warm-up run");
    ms.push_back(time_launches(ev, [&] { launch(i); }));
    if (best < 0 || ms.back() < ms[best]) best = i;
  }
  return ms;
}

// "<name> <ms> ms, <name> refused, ...": each candidate's time, for the record.
template <class NameOf>
std::string describe_times(const std::vector<double>& ms, NameOf name_of) {
  std::string all;
  for (size_t i = 0; i < ms.size(); ++i) {
    const std::string time = std::isnan(ms[i])   ? std::string("refused")
                             : std::isinf(ms[i]) ? std::string("not a candidate here")
                                                 : cat(ms[i], " ms");
    all += cat(i ? ", " : "", name_of(int(i)), " ", time);
  }
  return all;
}

// n uniform [-1, 1) values from rng, on the device as T (float, or a
// narrower type such as __nv_bfloat16, rounded to nearest) and in `host` as
// the floats the device holds: what a reference must compute with.
template <class T = float>
DeviceArray<T> random_on_device(std::vector<float>& host, size_t n, Rng& rng, const char* who) {
  host.resize(n);
  std::vector<T> stored(n);
  for (size_t i = 0; i < n; ++i) {
    stored[i] = T(float(rng.uniform(-1.0, 1.0)));
    host[i] = float(stored[i]);
  }
  DeviceArray<T> d(n, who);
  check_cuda(cudaMemcpy(d.p, stored.data(), n * sizeof(T), cudaMemcpyHostToDevice), who,
             ": cudaMemcpy to the device");
  return d;
}

// A tuner's measurement: each candidate's milliseconds (time_candidates) and
// the fastest one. Not seen by a profiler (ProfilerPaused); `where` names
// the problem when no candidate could be launched.
struct Timed {
  std::vector<double> ms;
  int best = -1;
};
template <class LaunchCandidate>
Timed pick_fastest(int count, const char* who, LaunchCandidate launch, const std::string& where,
                   const std::function<bool(int)>& applies = {}) {
  check_cuda(cudaGetLastError(), who, ": an earlier call (a stale error)");
  const ProfilerPaused not_profiled;  // the timing launches are not the workload
  EventPair ev(who);
  Timed t;
  t.ms = time_candidates(count, ev, launch, t.best, applies);
  WN_CHECK(t.best >= 0, who, ": no candidate could be launched at ", where);
  return t;
}

// The candidates a tune launched (a finite time), the winner first: each is
// checked (verify_candidate), not the winner alone. A wrong candidate is a
// bug even when it loses, and the tune is the one place a GPU runs them all
// (the registry's GPU checks run the tuning table's choice).
inline std::vector<int> launched_winner_first(const Timed& t) {
  std::vector<int> order{t.best};
  for (int i = 0; i < int(t.ms.size()); ++i)
    if (i != t.best && std::isfinite(t.ms[size_t(i)])) order.push_back(i);
  return order;
}

// One element's value by the definition, in double: the sum of its
// products, and the sum of their magnitudes (for the bound).
struct Reference {
  double want = 0, magnitude = 0;
  void add(double product) {
    want += product;
    magnitude += std::abs(product);
  }
};

// The op's bound for an fp32 sum of `terms` products, as a tolerance_at for
// verify_candidate: terms * 1.2e-7 * the magnitude of the element's products.
inline auto sum_bound(double terms) {
  return [terms](size_t, const Reference& r) { return terms * 1.2e-7 * r.magnitude + 1e-30; };
}

// Checks a candidate before the registration may launch it: launch() writes
// `out` (n elements of Out: float, or __nv_bfloat16 for a bf16 output,
// read as the floats it holds), poisoned first (0xFF bytes are a NaN in
// either, so an element it never writes fails); every element must be finite, and within
// tolerance_at(e, reference_at(e)) of reference_at(e) (sum_bound, or a
// kernel's own: a Winograd candidate's) — every element where the
// references of all n, `terms` products each, come to at most
// kVerifyAllProducts (the tests' sizes, a LeNet layer's), else 256 sampled
// ones, the first and the last first: a bench size's references in double
// would take minutes (a 56x56 wgrad with 64 channels: 36,864 elements of
// 200,704 products). Errors name the candidate and sizes (`what`) and the
// element (element_name(e), "y[n,k,p,q]").
constexpr double kVerifyAllProducts = double(1 << 26);
template <class Out, class LaunchCandidate, class ReferenceAt, class ToleranceAt, class ElementName>
void verify_candidate(const char* who, const std::string& what, LaunchCandidate launch, const DeviceArray<Out>& out,
                      size_t n, double terms, Rng& rng, ReferenceAt reference_at, ToleranceAt tolerance_at,
                      ElementName element_name) {
  check_cuda(cudaMemset(out.p, 0xFF, n * sizeof(Out)), who, ": cudaMemset of the output");
  {
    const ProfilerPaused not_profiled;  // the check is the tuner's, not the workload's
    launch();
  }
  check_cuda(cudaGetLastError(), who, ": the verifying launch");
  wait_for_launches(who, "the verifying launch");
  std::vector<Out> stored(n);
  check_cuda(cudaMemcpy(stored.data(), out.p, n * sizeof(Out), cudaMemcpyDeviceToHost), who,
             ": cudaMemcpy of the output");
  std::vector<float> got(n);
  for (size_t e = 0; e < n; ++e) got[e] = float(stored[e]);
  for (size_t e = 0; e < n; ++e)
    WN_CHECK(std::isfinite(got[e]), who, ": ", what, " left ", element_name(e), " = ", got[e]);
  const bool all = double(n) * terms <= kVerifyAllProducts || n <= 256;
  for (size_t i = 0; i < (all ? n : 256); ++i) {
    const size_t e = all ? i : i == 0 ? 0 : i == 1 ? n - 1 : size_t(rng.below(n));
    const Reference r = reference_at(e);
    const double tolerance = tolerance_at(e, r);
    WN_CHECK(std::abs(got[e] - r.want) <= tolerance, who, ": ", what, " gives ", element_name(e), " = ", got[e],
             ", want ", r.want, " (tolerance ", tolerance, ")");
  }
}

}  // namespace warpnet::device::gpu_timing
