// Warp collectives against their CUDA definitions, lane by lane.
#include <doctest/doctest.h>

#include <algorithm>
#include <type_traits>

#include "tests/simt/device_buffer.hpp"

namespace {

// out: (6, 64): for each lane of two warps the results of six shuffles.
__global__ void shuffles(int* out) {
  const int t = threadIdx.x, lane = t % 32, n = blockDim.x;
  const int v = 100 + t;
  out[0 * n + t] = __shfl_sync(0xffffffffu, v, 5);          // everyone reads lane 5 of its warp
  out[1 * n + t] = __shfl_up_sync(0xffffffffu, v, 3);       // lanes 0-2 keep their own
  out[2 * n + t] = __shfl_down_sync(0xffffffffu, v, 4);     // lanes 28-31 keep their own
  out[3 * n + t] = __shfl_xor_sync(0xffffffffu, v, 1);      // swap neighbours
  out[4 * n + t] = __shfl_down_sync(0xffffffffu, v, 2, 8);  // within segments of 8
  out[5 * n + t] = __shfl_sync(0xffffffffu, v, lane + 1, 16);  // rotate within halves
}

// Tree reduction of one float per lane with __shfl_xor_sync; out: one sum per warp.
__global__ void warp_sum(const float* in, float* out) {
  float v = in[threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = v;
}

// out: (5, 32): ballot, any, all of (lane < 10), all of true, and __activemask
// inside a branch taken by odd lanes only (even lanes leave 0).
__global__ void votes(unsigned* out) {
  const int lane = threadIdx.x;
  out[lane] = __ballot_sync(0xffffffffu, lane < 10);
  out[32 + lane] = unsigned(__any_sync(0xffffffffu, lane == 31));
  out[64 + lane] = unsigned(__all_sync(0xffffffffu, lane < 10));
  out[96 + lane] = unsigned(__all_sync(0xffffffffu, 1));
  // Only one branch calls it: identical calls in both would be merged by the
  // compiler. (After the branch the answer depends on whether the compiler
  // duplicated the call into both paths, on a GPU too: CUDA promises no
  // reconvergence, so the test does not ask.)
  if (lane % 2 == 1) out[128 + lane] = __activemask();
}

// Odd and even lanes shuffle within their own half-warp groups (masks that
// partition the warp), each with a different mask.
__global__ void masked_groups(int* out) {
  const int lane = threadIdx.x;
  const unsigned odd = 0xaaaaaaaau, even = 0x55555555u;
  if (lane % 2) {
    out[lane] = __shfl_sync(odd, lane * 10, 1);  // lane 1's value
  } else {
    out[lane] = __shfl_sync(even, lane * 10, 30);  // lane 30's value
  }
  __syncwarp();
}

// out: (6, 32): the shuffles' edge cases, as PTX shfl.sync defines them
// (source lane b[4:0], segments of `width`, up/down never leave a segment).
__global__ void shuffle_edges(int* out) {
  const int lane = threadIdx.x, v = 100 + lane;
  out[0 * 32 + lane] = __shfl_sync(0xffffffffu, v, -1, 16);    // lane 15 of each half
  out[1 * 32 + lane] = __shfl_sync(0xffffffffu, v, 33);        // lane 1: 33 mod 32
  out[2 * 32 + lane] = __shfl_sync(0xffffffffu, v, 17, 8);     // 17 mod 8 = 1 within each segment of 8
  out[3 * 32 + lane] = __shfl_up_sync(0xffffffffu, v, 9, 8);   // past its segment: its own
  out[4 * 32 + lane] = __shfl_down_sync(0xffffffffu, v, 3, 8);  // lanes 5-7 of a segment keep their own
  out[5 * 32 + lane] = __shfl_xor_sync(0xffffffffu, v, 16, 16);  // see the test
}

// 64-bit and 16-bit values cross whole: a double, a long long and a __half
// from lane 31 - lane; a signed char comes back as an int (nvcc's overload).
__global__ void wide_and_narrow(double* d, long long* ll, __half* h, int* c) {
  const int lane = threadIdx.x;
  d[lane] = __shfl_sync(0xffffffffu, 1.0 / 3.0 + lane, 31 - lane);
  ll[lane] = __shfl_sync(0xffffffffu, (1LL << 40) + lane, 31 - lane);
  h[lane] = __shfl_sync(0xffffffffu, __half(0.5f + float(lane)), 31 - lane);
  const auto small = __shfl_sync(0xffffffffu, static_cast<signed char>(-lane), 31 - lane);
  static_assert(std::is_same_v<decltype(small), const int>);
  c[lane] = small;
}

}  // namespace

TEST_CASE("shuffles wrap source lanes and keep to their segments as PTX defines") {
  DeviceBuffer<int> out(6 * 32);
  warpnet::simt::launch(shuffle_edges, dim3(1), dim3(32), 0, out.get());
  const auto v = out.download();
  for (int lane = 0; lane < 32; ++lane) {
    CAPTURE(lane);
    const int segment8 = lane / 8 * 8;
    CHECK(v[0 * 32 + lane] == 100 + (lane < 16 ? 15 : 31));
    CHECK(v[1 * 32 + lane] == 101);
    CHECK(v[2 * 32 + lane] == 100 + segment8 + 1);
    CHECK(v[3 * 32 + lane] == 100 + lane);
    CHECK(v[4 * 32 + lane] == 100 + (lane % 8 + 3 < 8 ? lane + 3 : lane));
    // XOR 16 in segments of 16: "each group ... can access elements from
    // earlier groups", not later ones (Programming Guide, __shfl_xor_sync):
    // lanes 0-15 keep their own, lanes 16-31 read lane - 16.
    CHECK(v[5 * 32 + lane] == 100 + (lane < 16 ? lane : lane - 16));
  }
}

TEST_CASE("shuffles move doubles, long longs and halves bit for bit, and a char as an int") {
  DeviceBuffer<double> d(32);
  DeviceBuffer<long long> ll(32);
  DeviceBuffer<__half> h(32);
  DeviceBuffer<int> c(32);
  warpnet::simt::launch(wide_and_narrow, dim3(1), dim3(32), 0, d.get(), ll.get(), h.get(), c.get());
  const auto dv = d.download();
  const auto lv = ll.download();
  const auto hv = h.download();
  const auto cv = c.download();
  for (int lane = 0; lane < 32; ++lane) {
    CAPTURE(lane);
    CHECK(dv[lane] == 1.0 / 3.0 + (31 - lane));
    CHECK(lv[lane] == (1LL << 40) + (31 - lane));
    CHECK(float(hv[lane]) == 0.5f + float(31 - lane));  // exact in fp16 up to 2048
    CHECK(cv[lane] == -(31 - lane));
  }
}

TEST_CASE("__shfl_sync, _up, _down, _xor with full and partial widths") {
  DeviceBuffer<int> out(6 * 64);
  warpnet::simt::launch(shuffles, dim3(1), dim3(64), 0, out.get());
  const auto v = out.download();
  for (int t = 0; t < 64; ++t) {
    const int lane = t % 32, warp = t / 32, own = 100 + t, base = 100 + 32 * warp;
    CHECK(v[t] == base + 5);
    CHECK(v[64 + t] == (lane >= 3 ? own - 3 : own));
    CHECK(v[128 + t] == (lane < 28 ? own + 4 : own));
    CHECK(v[192 + t] == base + (lane ^ 1));
    CHECK(v[256 + t] == (lane % 8 < 6 ? own + 2 : own));
    CHECK(v[320 + t] == base + (lane / 16) * 16 + (lane + 1) % 16);
  }
}

TEST_CASE("__shfl_xor_sync butterfly sums a warp") {
  std::vector<float> in(64);
  for (int i = 0; i < 64; ++i) in[i] = float(i);
  DeviceBuffer<float> d_in(in), d_out(2);
  warpnet::simt::launch(warp_sum, dim3(1), dim3(64), 0, d_in.get(), d_out.get());
  // Sums of small integers are exact in float.
  CHECK(d_out.download() == std::vector<float>{496.0f, 1520.0f});
}

TEST_CASE("__ballot_sync, __any_sync, __all_sync and __activemask in a divergent branch") {
  DeviceBuffer<unsigned> out(5 * 32);
  REQUIRE(cudaMemset(out.get(), 0, out.size() * sizeof(unsigned)) == cudaSuccess);
  warpnet::simt::launch(votes, dim3(1), dim3(32), 0, out.get());
  const auto v = out.download();
  for (int lane = 0; lane < 32; ++lane) {
    CHECK(v[lane] == 0x3ffu);
    CHECK(v[32 + lane] == 1);
    CHECK(v[64 + lane] == 0);
    CHECK(v[96 + lane] == 1);
    // The lanes that reached the same __activemask() call together.
    CHECK(v[128 + lane] == (lane % 2 ? 0xaaaaaaaau : 0u));
  }
}

TEST_CASE("collectives with disjoint masks complete independently") {
  DeviceBuffer<int> out(32);
  warpnet::simt::launch(masked_groups, dim3(1), dim3(32), 0, out.get());
  const auto v = out.download();
  for (int lane = 0; lane < 32; ++lane) CHECK(v[lane] == (lane % 2 ? 10 : 300));
}

namespace {

// out: (9, 32), each lane's results: the six reductions of v = lane·7 − 100
// (int) over the warp, unsigned min and max of the same bits, and the
// reductions over the odd lanes only (mask 0xaaaaaaaa; even lanes leave 0).
__global__ void reductions(int* out) {
  const int lane = threadIdx.x, v = lane * 7 - 100;
  const unsigned all = 0xffffffffu;
  out[0 * 32 + lane] = __reduce_add_sync(all, v);
  out[1 * 32 + lane] = __reduce_min_sync(all, v);
  out[2 * 32 + lane] = __reduce_max_sync(all, v);
  out[3 * 32 + lane] = int(__reduce_min_sync(all, unsigned(v)));
  out[4 * 32 + lane] = int(__reduce_max_sync(all, unsigned(v)));
  out[5 * 32 + lane] = int(__reduce_and_sync(all, unsigned(v)));
  out[6 * 32 + lane] = int(__reduce_or_sync(all, unsigned(v)));
  out[7 * 32 + lane] = int(__reduce_xor_sync(all, unsigned(v)));
  if (lane % 2) out[8 * 32 + lane] = __reduce_add_sync(0xaaaaaaaau, v);
}

// out: (3, 32): __match_any_sync of lane % 3 (an int), of a float that is
// +0.0 on even lanes and -0.0 on odd ones (different bits), and
// __match_all_sync of a constant and of lane / 16, with its predicate.
__global__ void matches(unsigned* out, int* pred) {
  const int lane = threadIdx.x;
  out[lane] = __match_any_sync(0xffffffffu, lane % 3);
  out[32 + lane] = __match_any_sync(0xffffffffu, lane % 2 ? -0.0f : 0.0f);
  out[64 + lane] = __match_all_sync(0xffffffffu, 5.0, &pred[lane]);
  out[96 + lane] = __match_all_sync(0xffffffffu, (long long)(lane / 16), &pred[32 + lane]);
}

// Half the warp calls the int overload of __reduce_min_sync, half the
// unsigned one, with the same mask: two instructions, undefined on a GPU.
__global__ void mixed_reductions(int* out) {
  const int lane = threadIdx.x;
  if (lane < 16) out[lane] = __reduce_min_sync(0xffffffffu, lane);
  else out[lane] = int(__reduce_min_sync(0xffffffffu, unsigned(lane)));
}

}  // namespace

TEST_CASE("__reduce_*_sync: integer sums, minima, maxima and bit operations over the lanes of the mask") {
  DeviceBuffer<int> out(9 * 32);
  REQUIRE(cudaMemset(out.get(), 0, out.size() * sizeof(int)) == cudaSuccess);
  warpnet::simt::launch(reductions, dim3(1), dim3(32), 0, out.get());
  const auto r = out.download();
  int sum = 0, odd_sum = 0;
  unsigned umin = ~0u, umax = 0, band = ~0u, bor = 0, bxor = 0;
  for (int lane = 0; lane < 32; ++lane) {
    const int v = lane * 7 - 100;
    sum += v;
    if (lane % 2) odd_sum += v;
    umin = std::min(umin, unsigned(v)), umax = std::max(umax, unsigned(v));
    band &= unsigned(v), bor |= unsigned(v), bxor ^= unsigned(v);
  }
  for (int lane = 0; lane < 32; ++lane) {
    INFO("lane ", lane);
    CHECK(r[0 * 32 + lane] == sum);
    CHECK(r[1 * 32 + lane] == -100);  // signed: lane 0's
    CHECK(r[2 * 32 + lane] == 117);   // lane 31's
    CHECK(unsigned(r[3 * 32 + lane]) == umin);
    CHECK(unsigned(r[4 * 32 + lane]) == umax);  // unsigned: -2 (lane 14) is the largest
    CHECK(unsigned(r[5 * 32 + lane]) == band);
    CHECK(unsigned(r[6 * 32 + lane]) == bor);
    CHECK(unsigned(r[7 * 32 + lane]) == bxor);
    CHECK(r[8 * 32 + lane] == (lane % 2 ? odd_sum : 0));
  }
  CHECK(umax == unsigned(-2));  // the case signed and unsigned disagree on

  DeviceBuffer<int> mixed(32);
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(mixed_reductions, dim3(1), dim3(32), 0, mixed.get()),
                       doctest::Contains("disagree: this lane is in the int __reduce_min_sync at"),
                       warpnet::simt::LaunchError);
}

TEST_CASE("__match_any_sync and __match_all_sync compare the lanes' bits") {
  DeviceBuffer<unsigned> out(4 * 32);
  DeviceBuffer<int> pred(64);
  warpnet::simt::launch(matches, dim3(1), dim3(32), 0, out.get(), pred.get());
  const auto m = out.download();
  const auto p = pred.download();
  for (int lane = 0; lane < 32; ++lane) {
    INFO("lane ", lane);
    unsigned same_residue = 0;
    for (int o = 0; o < 32; ++o)
      if (o % 3 == lane % 3) same_residue |= 1u << o;
    CHECK(m[lane] == same_residue);
    CHECK(m[32 + lane] == (lane % 2 ? 0xaaaaaaaau : 0x55555555u));  // -0.0 and +0.0 differ in bits
    CHECK(m[64 + lane] == 0xffffffffu);
    CHECK(p[lane] == 1);
    CHECK(m[96 + lane] == 0u);
    CHECK(p[32 + lane] == 0);
  }
}
