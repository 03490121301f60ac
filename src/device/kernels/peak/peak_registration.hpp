// What the peak registrations share: sizes {blocks, repeats}, buffers
// {A, B, C}, the FLOP and byte formulas and the launch shape (a block of 256
// threads per 128x256 tile). Private to the registration files, as
// gemm_registration.hpp is (an anonymous namespace: one per copy).
#pragma once
#include "device/kernels/copy.hpp"
#include "kernels/common/all.hpp"  // before any kernel file is included (see there)

namespace warpnet::device::peak {
namespace {

constexpr int kThreads = 256;
constexpr double kTileElements = 128.0 * 256.0, kTileK = 16.0;

inline int blocks(const Sizes& s) { return int(s[0]); }
inline int repeats(const Sizes& s) { return int(s[1]); }

// Every repeat of every block: a 128x256x16 tile product.
inline double flops(const Sizes& s) { return 2.0 * kTileElements * kTileK * double(s[0]) * double(s[1]); }
// Each block reads A (128x16) and B (16x256) once, in `in_bytes` per element, and writes its C in fp32.
inline double bytes(const Sizes& s, int in_bytes) {
  return double(s[0]) * ((128.0 * 16.0 + 16.0 * 256.0) * in_bytes + 4.0 * kTileElements);
}
inline Launch shape(const Sizes& s, size_t dynamic_shared = 0) {
  return Launch{dim3(unsigned(blocks(s))), dim3(kThreads), dynamic_shared};
}

}  // namespace
}  // namespace warpnet::device::peak
