// Integers in [-4, 4] from a fixed sequence (an LCG, so every run and machine
// sees the same): exact in fp16, bf16 and e4m3 (3 mantissa bits hold them),
// and so are their products and the fp32 sums of a few thousand of them, so
// tensor-core results can be compared for equality.
#pragma once
#include <cstdint>
#include <vector>

inline std::vector<float> small_integers(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x = float(int(seed >> 33) % 9 - 4);
  }
  return v;
}
