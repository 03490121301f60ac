// Seeded random numbers: every run that uses randomness prints its seed and
// reproduces exactly from it.
#pragma once
#include <cmath>
#include <cstdint>

#include "core/tensor.hpp"

namespace warpnet {

// xoshiro256** seeded through splitmix64: fast, small state, and the same
// stream on every platform (std::normal_distribution is not).
class Rng {
 public:
  explicit Rng(uint64_t seed = 0) { reseed(seed); }
  void reseed(uint64_t seed);
  uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Standard normal by Box-Muller.
  double normal();
  // Uniform integer in [0, n).
  uint64_t below(uint64_t n) { return next_u64() % n; }
  // A child generator with an independent stream (for per-thread work).
  Rng split() { return Rng(next_u64()); }

 private:
  uint64_t s_[4];
};

// Fill helpers for f32/f64 tensors.
void fill_uniform(Tensor& t, Rng& rng, double lo, double hi);
void fill_normal(Tensor& t, Rng& rng, double mean, double stddev);

}  // namespace warpnet
