// What the direct versions for few channels share (conv v8, dgrad v4): a
// thread keeps one output pixel's channels — up to 8 or 16 — in registers,
// padded to a power of two of "slots", and at each filter tap multiplies one
// input value from shared memory into all of them, the tap's weights read as
// float4s at one address by every lane (a broadcast).
#pragma once
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"
#include "kernels/common/in_flight.hpp"

namespace conv_few_channels {

constexpr int kSharedFloats = 48 * 1024 / 4;  // what a block gets without opting in
constexpr int kMaxBatch = 65535;              // the batch is the grid's z, which CUDA caps there

// Whether an input window of `rows` x `cols` floats could be staged at all:
// the callers compute both in 64 bits before their int tile arithmetic, as a
// huge stride or dilation makes a window whose size overflows int (and
// would pass a "fits" test as a small or negative number).
__host__ __device__ constexpr bool window_fits(long long rows, long long cols) {
  return rows <= kSharedFloats && cols <= kSharedFloats && rows * cols <= kSharedFloats;
}

// The fewest slots (1, 2, 4, 8, 16) that hold n channels.
__host__ __device__ constexpr int slots(int n) { return n <= 1 ? 1 : n <= 2 ? 2 : n <= 4 ? 4 : n <= 8 ? 8 : 16; }

// acc[o] += v · w[o] for the SLOTS weights of one tap (16-byte aligned when SLOTS >= 4).
template <int SLOTS>
__device__ __forceinline__ void multiply_add(float (&acc)[SLOTS], float v, const float* w) {
  if constexpr (SLOTS >= 4) {
#pragma unroll
    for (int o = 0; o < SLOTS; o += 4) {
      const float4 w4 = ::warpnet::load_float4(w + o);
      acc[o] += v * w4.x, acc[o + 1] += v * w4.y, acc[o + 2] += v * w4.z, acc[o + 3] += v * w4.w;
    }
  } else {
#pragma unroll
    for (int o = 0; o < SLOTS; ++o) acc[o] += v * w[o];
  }
}

// One staged element: dst[at] = value.
struct Staged {
  int at;
  float value;
};

// Stages `count` elements into dst by a block of THREADS threads: thread t
// takes element(i) for i = t, t + THREADS, ... and stores it. Each thread
// issues warpnet::kLoadsInFlight elements' loads before it stores any of
// them (in_flight.hpp), so it waits for one memory latency per 8 elements,
// not one per element: at LeNet-5's sizes a block stages 20-40 elements a
// thread and does little else.
template <int THREADS, class Element>
__device__ __forceinline__ void stage(float* dst, int count, Element element) {
  using warpnet::kLoadsInFlight;
  for (int base = threadIdx.x; base < count; base += kLoadsInFlight * THREADS) {
    Staged staged[kLoadsInFlight];
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u) {
      const int i = base + u * THREADS;
      staged[u] = i < count ? element(i) : Staged{0, 0.0f};
    }
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u)
      if (base + u * THREADS < count) dst[staged[u].at] = staged[u].value;
  }
}

// Stages `planes` windows of a stack of (height, width) planes — x's input
// channels, dy's output channels — into shared memory: dst[p·pitch + i·cols
// + j] = src[(p·height + row0 + i)·width + col0 + j], zero outside the
// planes and in the slots past rows·cols (pitch >= rows·cols). A 1-D block
// of THREADS threads; divisions once per staged element, not per
// multiply-add.
template <int THREADS>
__device__ __forceinline__ void stage_windows(float* dst, const float* src, int planes, int pitch, int rows, int cols,
                                              int row0, int col0, int height, int width) {
  stage<THREADS>(dst, planes * pitch, [&](int i) {
    const int p = i / pitch, e = i - p * pitch, wi = e / cols, wj = e - wi * cols;
    const int h = row0 + wi, x = col0 + wj;
    const bool inside = wi < rows && unsigned(h) < unsigned(height) && unsigned(x) < unsigned(width);
    return Staged{i, inside ? src[(size_t(p) * height + h) * width + x] : 0.0f};
  });
}

// Stages the filters of `count` staged channels j, tap-major with the
// register channels o innermost: dst[(j·RS + rs)·SLOTS + o] = weight(j, o,
// rs) for o < channels, 0 in the padding slots.
template <int SLOTS, int THREADS, class Weight>
__device__ __forceinline__ void stage_filters(float* dst, int count, int RS, int channels, Weight weight) {
  stage<THREADS>(dst, count * RS * SLOTS, [&](int i) {
    const int o = i % SLOTS, jrs = i / SLOTS, j = jrs / RS, rs = jrs - j * RS;
    return Staged{i, o < channels ? weight(j, o, rs) : 0.0f};
  });
}

// visit.template operator()<SLOTS>() for slots(n) (n at most 16).
template <class Visit>
auto with_slots(int n, Visit&& visit) {
  switch (slots(n)) {
    case 1: return visit.template operator()<1>();
    case 2: return visit.template operator()<2>();
    case 4: return visit.template operator()<4>();
    case 8: return visit.template operator()<8>();
    default: return visit.template operator()<16>();
  }
}

}  // namespace conv_few_channels
