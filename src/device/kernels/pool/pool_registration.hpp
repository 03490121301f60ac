// What the pooling registrations share: reading the sizes {N, C, H, W,
// kernel, stride, padding} into the kernels' Pool2dShape, the launch over one
// thread per output (forward) or input (backward) element, and the FLOP and
// byte formulas, counted exactly from the clipped windows. An anonymous
// namespace although this is a header: it is private to the registration
// files, each compiled as three copies (plain, traced, nvcc; see ../copy.hpp)
// whose helpers must not be merged by the linker.
#pragma once
#include <cstdint>

#include "device/kernels/copy.hpp"
#include "kernels/common/all.hpp"  // before any kernel file is included (see there)

// Pool2dShape in the same anonymous namespace the kernel files are included
// into (their own #include of it is then skipped), so the helpers below and
// the kernels name one type.
namespace {
#include "kernels/pool/pool_shape.hpp"
}  // namespace

namespace warpnet::device::pool {
namespace {

constexpr int kBlock = 256;

// Sizes {N, C, H, W, kernel, stride, padding} as the kernels see them, after
// the CPU's checks (src/cpu/pool2d.cpp): the kernels rely on every window
// holding at least one pixel, and index with int.
inline Pool2dShape shape_of(const Sizes& s) {
  const int64_t N = s[0], C = s[1], H = s[2], W = s[3], k = s[4], stride = s[5], pad = s[6];
  if (N < 1 || C < 1 || H < 1 || W < 1 || k < 1 || stride < 1 || pad < 0 || pad > k / 2)
    fail("pool2d: sizes need N, C, H, W, kernel, stride >= 1 and 0 <= padding <= kernel/2");
  // Floor-mode output extents, as cpu::conv_out_size.
  const int64_t P = H + 2 * pad < k ? 0 : (H + 2 * pad - k) / stride + 1;
  const int64_t Q = W + 2 * pad < k ? 0 : (W + 2 * pad - k) / stride + 1;
  if (P < 1 || Q < 1) fail("pool2d: the output would be empty: input ", H, "x", W, ", kernel ", k);
  // A thread's index blockIdx.x·kBlock + threadIdx.x is an int too, up to
  // kBlock − 1 past the last element.
  constexpr int64_t kMaxElements = INT32_MAX - kBlock;
  if (N * C * H * W > kMaxElements || N * C * P * Q > kMaxElements)
    fail("pool2d: more than 2^31 - 256 elements per tensor");
  return Pool2dShape{int(N * C), int(H), int(W), int(P), int(Q), int(k), int(stride), int(pad)};
}

inline double outputs(const Pool2dShape& g) { return double(g.planes) * g.P * g.Q; }
inline double inputs(const Pool2dShape& g) { return double(g.planes) * g.H * g.W; }

// Pixels read by all windows of a plane together: Σ_p |rows(p)| · Σ_q |cols(q)|
// (windows clipped at the image edge read fewer than kernel²).
inline double window_pixels(const Pool2dShape& g) {
  double rows = 0, cols = 0;
  for (int p = 0; p < g.P; ++p) rows += pool_window(p, g.H, g).end - pool_window(p, g.H, g).begin;
  for (int q = 0; q < g.Q; ++q) cols += pool_window(q, g.W, g).end - pool_window(q, g.W, g).begin;
  return rows * cols;
}
// Σ over a plane's windows of |window|²: max pooling's backward rescans each
// window once for every pixel inside it (each pixel's thread visits all the
// windows covering it), |window|² loads per window.
inline double window_pixels_squared(const Pool2dShape& g) {
  double rows = 0, cols = 0;
  for (int p = 0; p < g.P; ++p) {
    const PoolSpan r = pool_window(p, g.H, g);
    rows += double(r.end - r.begin) * (r.end - r.begin);
  }
  for (int q = 0; q < g.Q; ++q) {
    const PoolSpan c = pool_window(q, g.W, g);
    cols += double(c.end - c.begin) * (c.end - c.begin);
  }
  return rows * cols;
}

// One thread per element of `elements` (at most 2^31 - 256: shape_of).
inline Launch one_thread_each(double elements) {
  return Launch{dim3(unsigned(ceil_div(int64_t(elements), kBlock))), dim3(kBlock), 0};
}

}  // namespace
}  // namespace warpnet::device::pool
