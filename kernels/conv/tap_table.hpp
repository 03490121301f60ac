// The packed tap of the tap-table conv versions (conv v7, dgrad v3): one
// reduction index (c,r,s) or (k,r,s) as the gather uses it — an offset into
// one image and the displacement (r·dil, s·dil) for the bounds test — in one
// 8-byte word, so that reading it from shared memory is one load on both
// compilers (g++ splits a struct's copy into one load per member, and the
// tracer would count three). Bits 0-31 the offset, 32-47 r·dil, 48-63 s·dil.
// What the offset is relative to is each kernel's own (its header says).
#pragma once
#include <cstdint>
#include <type_traits>

#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"

namespace conv_taps {

using Tap = uint64_t;
__host__ __device__ constexpr Tap make_tap(int offset, int dh, int dw) {
  return uint64_t(uint32_t(offset)) | uint64_t(uint16_t(dh)) << 32 | uint64_t(uint16_t(dw)) << 48;
}
__device__ __forceinline__ int tap_offset(Tap tap) { return int(uint32_t(tap)); }
__device__ __forceinline__ int tap_dh(Tap tap) { return int(uint16_t(tap >> 32)); }  // r·dil
__device__ __forceinline__ int tap_dw(Tap tap) { return int(tap >> 48); }            // s·dil
// Taps a table holds: the reduction of issue 5's deepest layer (256 channels,
// 3x3) in one chunk; a longer one is walked in chunks. A multiple of every
// candidate's BK.
constexpr int kTableTaps = 2304;
// r·dil of an entry past the reduction: beyond any image (H + pad <= kNoTap),
// so its bounds test fails and a zero is gathered.
constexpr int kNoTap = UINT16_MAX;
// Whether a table can describe g: its 16-bit displacements and kNoTap mark
// need H + pad and W + pad at most kNoTap and the filter's span below it.
// In 64 bits, as H + pad and the span can pass int's range.
inline bool table_fits(const ConvShape& g) {
  return int64_t(g.H) + g.pad <= kNoTap && int64_t(g.W) + g.pad <= kNoTap && int64_t(g.dil) * (g.R - 1) < kNoTap &&
         int64_t(g.dil) * (g.S - 1) < kNoTap;
}
// The row coordinate given to a row past M: outside the image for every tap.
constexpr int kOutsideRow = -(1 << 30);

// The same tap unpacked, for shapes past table_fits: wgrad v3's tiles, which
// have no table-free twin to run instead (conv v7 runs v4's kernel, dgrad v3
// dgrad v2's). 16 bytes, one shared load on nvcc; the table holds a block's
// BM taps, so the doubled size costs little. Its limit is int's: with every
// coordinate within kMostWide, a row's h0 (at least −pad, or kOutsideRow)
// plus a displacement (at most kMostWide, or kOutsideRow for a tap past the
// reduction) neither wraps nor lands inside an image by accident.
struct alignas(16) WideTap {  // aligned: one 16-byte load, not four
  int offset, dh, dw, unused;
};
constexpr int kMostWide = 1 << 29;
__device__ __forceinline__ int tap_offset(const WideTap& tap) { return tap.offset; }
__device__ __forceinline__ int tap_dh(const WideTap& tap) { return tap.dh; }
__device__ __forceinline__ int tap_dw(const WideTap& tap) { return tap.dw; }
inline bool wide_table_fits(const ConvShape& g) {
  return int64_t(g.H) + g.pad <= kMostWide && int64_t(g.W) + g.pad <= kMostWide &&
         int64_t(g.dil) * (g.R - 1) <= kMostWide && int64_t(g.dil) * (g.S - 1) <= kMostWide;
}

// A tap of either kind: tap_at<T>(offset, dh, dw), and no_tap<T>(), the one a
// row past the reduction gets (beyond every image: its bounds test fails).
template <class T>
__host__ __device__ constexpr T tap_at(int offset, int dh, int dw) {
  if constexpr (std::is_same_v<T, WideTap>) return WideTap{offset, dh, dw, 0};
  else return make_tap(offset, dh, dw);
}
template <class T>
__host__ __device__ constexpr T no_tap() {
  if constexpr (std::is_same_v<T, WideTap>) return WideTap{0, kOutsideRow, 0, 0};
  else return make_tap(0, kNoTap, 0);
}

// Filter tap crs = (c, r, s) of x as the gathers use it: the offset
// c·H·W + r·dil·W + s·dil into one image and (r·dil, s·dil); past C·R·S,
// no_tap (it gathers a zero). Its divisions run once per tap and table
// (conv v7 and v9, wgrad v3 and v5).
template <class T>
__device__ __forceinline__ T x_tap(const ConvShape& g, int crs) {
  if (crs >= g.crs()) return no_tap<T>();
  const int RS = g.R * g.S, c = crs / RS, rs = crs % RS, dh = rs / g.S * g.dil, dw = rs % g.S * g.dil;
  return tap_at<T>(c * g.H * g.W + dh * g.W + dw, dh, dw);
}

// Where output pixel m of the forward's implicit GEMM (m = (n, p, q), a row
// of A; conv v7 and v9) reads its taps: image n of x, and the input pixel
// (h0, w0) under tap (0, 0) with its offset h0·W + w0, to which a tap's
// offset is added. Past M = N·P·Q, h0 = kOutsideRow: every bounds test fails.
struct ForwardRow {
  int h0, w0, hw0;
  const float* image;  // x + n·C·H·W, (C,H,W)
};
__device__ __forceinline__ ForwardRow forward_row(const ConvShape& g, int m, const float* x) {
  if (m >= g.gemm_m()) return ForwardRow{kOutsideRow, 0, 0, x};
  const int PQ = g.P * g.Q, pq = m % PQ;
  const int h0 = (pq / g.Q) * g.stride - g.pad, w0 = (pq % g.Q) * g.stride - g.pad;
  return ForwardRow{h0, w0, h0 * g.W + w0, x + size_t(m / PQ) * g.C * g.H * g.W};
}

}  // namespace conv_taps
