// Dropout v1 — a counter-based mask: each thread hashes (seed, i) for its own
// elements, so the grid draws the CPU's mask bit for bit.
//
// Idea: inverted dropout keeps element i with probability 1 − p and scales
//   it by 1/(1 − p). The randomness is the whole problem: a sequential
//   generator (the CPU's Rng) makes draw i after draws 0..i−1, which a grid
//   cannot follow, and a generator per thread (cuRAND's curand_init with
//   subsequences) gives masks that depend on the launch shape. A counter-based
//   generator makes draw i a pure function of (seed, i) — here splitmix64's
//   finalizer, kernels/common/counter_hash.hpp — so any thread draws any
//   element in any order, and the CPU (src/cpu/dropout.cpp) draws the same
//   bits from the same header. The decision is an integer compare against
//   threshold = floor(p·2^32), computed once on the host: no float rounding
//   on the device can flip a keep. The mask (0 or 1/(1 − p)) is an output,
//   and the backward is dy ⊙ mask (the elementwise op `mul`).
//   The seed is read from device memory, not passed as a launch argument: a
//   training step captured in a CUDA graph replays its launches with their
//   arguments frozen, and the host writes the next seed into that memory
//   before each replay, so every step still draws a new mask.
//   Memory-wise it is v1 of the elementwise family (a grid-stride loop):
//   4 bytes read, 8 written per element (and the 8-byte seed, which every
//   thread reads from the same address: one broadcast, served from cache). The hash is two 64-bit multiplies,
//   three shifts and xors and an add — a few dozen 32-bit integer
//   instructions on a GPU, which emulates 64-bit multiplies — and should hide
//   under the memory traffic (to be measured).
// Changed: first version (the loop of kernels/elementwise/01_grid_stride.cu,
//   with the hash and a second output).
// Measured: not yet measured on a GPU.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace dropout/01 --size 1031,500000
#include <cstdint>

#include "kernels/common/counter_hash.hpp"
#include "kernels/common/cuda_compat.hpp"

// x, y, mask: (n) fp32; seed_words: (2) the 64-bit seed, low word first.
// mask[i] = keep_scale if counter_hash(seed, i) >= threshold, else 0;
// y[i] = x[i]·mask[i] (one multiply, as the CPU: the same bits, -0 for a
// dropped negative x included). Launch: block (BLOCK); any grid: the loop
// covers every element.
template <int BLOCK>
__global__ void dropout_counter_hash(int n, const uint32_t* __restrict__ seed_words, uint32_t threshold,
                                     float keep_scale, const float* __restrict__ x, float* __restrict__ y,
                                     float* __restrict__ mask) {
  static_assert(BLOCK % 32 == 0, "whole warps");
  const uint64_t seed = uint64_t(seed_words[1]) << 32 | seed_words[0];
  const size_t stride = size_t(gridDim.x) * BLOCK;
  for (size_t i = size_t(blockIdx.x) * BLOCK + threadIdx.x; i < size_t(n); i += stride) {
    const float m = warpnet::dropout_keeps(seed, i, threshold) ? keep_scale : 0.0f;
    mask[i] = m;
    y[i] = x[i] * m;
  }
}
