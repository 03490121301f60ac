// What the peak registrations share: sizes {blocks, repeats}, buffers
// {A, B, C}, the FLOP and byte formulas and the launch shape (a block per
// 128x256 tile, of 256 or 512 threads). Private to the registration files, as
// gemm_registration.hpp is (an anonymous namespace: one per copy).
#pragma once
#include "device/kernels/copy.hpp"
#include "kernels/common/all.hpp"  // before any kernel file is included (see there)

namespace warpnet::device::peak {
namespace {

constexpr double kTileElements = 128.0 * 256.0, kTileK = 16.0;

inline int blocks(const Sizes& s) { return int(s[0]); }
inline int repeats(const Sizes& s) { return int(s[1]); }

// Every repeat of every block: a 128x256x16 tile product.
inline double flops(const Sizes& s) { return 2.0 * kTileElements * kTileK * double(s[0]) * double(s[1]); }
// Each block reads A (128x16) and B (16x256) once, in `in_bytes` per element, and writes its C in fp32.
inline double bytes(const Sizes& s, int in_bytes) {
  return double(s[0]) * ((128.0 * 16.0 + 16.0 * 256.0) * in_bytes + 4.0 * kTileElements);
}
inline Launch shape(const Sizes& s, int threads, size_t dynamic_shared = 0) {
  return Launch{dim3(unsigned(blocks(s))), dim3(unsigned(threads)), dynamic_shared};
}

// Launches `kernel` (repeats, A, B, C) with the registered shape on buffers
// {A, B, C} of element type In; raises the shared-memory limit first when
// the shape asks for dynamic shared memory. Throws when the launch fails.
template <class In>
void launch_peak(void (*kernel)(int, const In*, const In*, float*), const Sizes& s, const Launch& l, Buffers b) {
  const auto* A = static_cast<const In*>(b[0]);
  const auto* B = static_cast<const In*>(b[1]);
  auto* C = static_cast<float*>(b[2]);
  if (l.dynamic_shared > 0)
    warpnet::launch_kernel_opted_in(kernel, l.grid, l.block, l.dynamic_shared, repeats(s), A, B, C);
  else launch_kernel(kernel, l.grid, l.block, l.dynamic_shared, repeats(s), A, B, C);
  check_launch();
}

}  // namespace
}  // namespace warpnet::device::peak
