// Counter-based random bits: element i's draw is a pure function of (seed, i),
// so any thread can make it in any order and the CPU and every GPU kernel get
// the same bits. A sequential generator (warpnet's Rng, xoshiro256**) hands
// out draw i only after draws 0..i-1, which a grid of threads cannot follow.
//
// Shared by src/cpu/dropout.cpp (the reference) and the dropout kernel
// (kernels/dropout/): one definition, so the masks agree bit for bit.
//
// Unlike the other kernels/common headers this one does not include
// cuda_compat.hpp: src/cpu sits below the emulator (src/simt) and must not
// pull in its qualifier macros and fp16 types. Under nvcc the functions are
// __host__ __device__; under g++ every function is host code anyway. Nor do
// they sit in the per-copy inline namespace, which only cuda_compat.hpp
// names: pure integer functions without memory accesses compute the same in
// every copy (plain, traced, nvcc's host side, src/cpu), so the linker
// keeping any one of them changes nothing.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define WARPNET_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define WARPNET_HOST_DEVICE inline
#endif

namespace warpnet {

// 32 well-mixed bits for element i of the stream `seed`: splitmix64's output
// number i + 1 for that seed (its state after k steps is seed + k·γ, so the
// generator is already counter-based), keeping the high 32 bits. Its
// finalizer is a bijection of 64-bit words whose every output bit depends on
// every input bit, and its outputs pass BigCrush (Steele, Lea & Flood 2014).
// Integer operations only: identical on any compiler and device.
WARPNET_HOST_DEVICE constexpr uint32_t counter_hash(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;  // γ: 2^64 / the golden ratio, odd
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<uint32_t>(z >> 32);
}

// The stream whose element i is element first + i of `seed`'s:
// counter_hash(counter_stream_from(seed, first), i) == counter_hash(seed,
// first + i), as the state is seed + (i + 1)·γ. A data-parallel rank holding
// rows r.. of a batch draws the whole batch's mask for its rows from it,
// with the kernel unchanged (nn::Dropout).
WARPNET_HOST_DEVICE constexpr uint64_t counter_stream_from(uint64_t seed, uint64_t first) {
  return seed + first * 0x9E3779B97F4A7C15ull;
}
static_assert(counter_hash(counter_stream_from(7, 1000), 5) == counter_hash(7, 1005));

// Dropout keeps element i iff counter_hash(seed, i) >= threshold, with
// threshold = floor(p·2^32): a keep probability of 1 - threshold/2^32, within
// 2^-32 of 1 - p. p·2^32 only moves p's exponent, so it is exact and the
// floor is the same on every machine. p = 0 gives 0: everything kept.
// Requires 0 <= p < 1.
WARPNET_HOST_DEVICE constexpr uint32_t dropout_threshold(double p) {
  return static_cast<uint32_t>(p * 4294967296.0);
}
WARPNET_HOST_DEVICE constexpr bool dropout_keeps(uint64_t seed, uint64_t i, uint32_t threshold) {
  return counter_hash(seed, i) >= threshold;
}

}  // namespace warpnet
