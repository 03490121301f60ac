// What the tests of the autotuned versions (matmul/10 and /24, the conv
// ops', LeNet-5's blocks) share: a fixed seed, fixed-seed inputs (the conv
// tests take the registry op's instead: conv_candidates.hpp), and one
// candidate's launch checked element by element against a double-precision
// reference. On a GPU the tuner may pick any candidate, so each one is
// checked this way.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "tests/simt/device_buffer.hpp"

namespace candidate_check {

constexpr uint64_t kSeed = 2026;

// Uniform in [-1, 1) from a fixed-seed 64-bit LCG (Knuth's MMIX constants).
inline std::vector<float> uniform(size_t n, uint64_t& state) {
  std::vector<float> v(n);
  for (float& x : v) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = float(double(state >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  }
  return v;
}

// launch(out) writes want.size() floats into `out`, poisoned with NaN first
// so that an element it never writes cannot pass; each must lie within
// bound[e] of want[e]. A launch the emulator's checker stops (out of bounds,
// a race, an uninitialized shared read) fails with its message, whether it
// threw (simt::launch) or left its error for cudaGetLastError (launches
// through launch_kernel, CUDA's error model). `what` names the candidate,
// the sizes and the seed; the first 5 misses are printed.
template <class Launch>
void check(const std::string& what, Launch launch, const std::vector<double>& want, const std::vector<double>& bound) {
  INFO(what);
  DeviceBuffer<float> out(std::vector<float>(want.size(), std::numeric_limits<float>::quiet_NaN()));
  try {
    launch(out.get());
  } catch (const warpnet::simt::LaunchError& e) {
    FAIL_CHECK(std::string(e.what()));
    return;
  }
  if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) {
    FAIL_CHECK(std::string(warpnet::cuda_error_detail(error)));
    return;
  }
  const std::vector<float> got = out.download();
  int mismatches = 0;
  for (size_t e = 0; e < got.size(); ++e) {
    if (std::abs(double(got[e]) - want[e]) <= bound[e]) continue;  // NaN fails here too
    if (++mismatches <= 5)
      std::printf("%s: element %zu = %g, want %g (tolerance %g)\n", what.c_str(), e, got[e], want[e], bound[e]);
  }
  CHECK(mismatches == 0);
}

}  // namespace candidate_check
