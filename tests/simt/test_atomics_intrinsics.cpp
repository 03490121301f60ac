// Atomics (contended across blocks on several workers), math and bit
// intrinsics, vector types and dynamic shared memory.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "tests/simt/device_buffer.hpp"

namespace {

// counters: [add, sub, max, min, exch-count, cas-count, inc, or]
__global__ void contend(int* counters, unsigned* bits, float* fsum, unsigned* wrap) {
  const int id = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&counters[0], 2);
  atomicSub(&counters[1], 1);
  atomicMax(&counters[2], id);
  atomicMin(&counters[3], -id);
  if (atomicExch(&counters[4], 1) == 0) atomicAdd(&counters[5], 1);  // exactly one thread sees 0
  int old = atomicCAS(&counters[6], 0, id + 1);  // only the first succeeds
  if (old == 0) atomicAdd(&counters[7], 1);
  atomicOr(bits, 1u << (id % 32));
  atomicAdd(fsum, 0.5f);
  atomicInc(wrap, 9);  // counts 0..9 then wraps to 0
}

// sums: each thread adds its own pair of values to its own float.
__global__ void add_pairs(float* sums, const float* first, const float* second) {
  const int t = threadIdx.x;
  sums[t] = 0.0f;
  atomicAdd(&sums[t], first[t]);
  atomicAdd(&sums[t], second[t]);
}

// out: (blockDim.x,) — each thread stores its value into dynamic shared
// memory, then reads its neighbour's.
__global__ void dynamic_neighbour(float* out) {
  float* s = warpnet::dynamic_shared<float>();
  const int t = threadIdx.x;
  s[t] = float(t) * 1.5f;
  __syncthreads();
  out[t] = s[(t + 1) % blockDim.x];
}

// out: (2,) float4: one loaded as a whole, one built with make_float4.
__global__ void vector_copy(const float4* in, float4* out) {
  out[0] = __ldg(&in[0]);
  out[1] = make_float4(in[0].w, in[0].z, in[0].y, in[0].x);
}

// Every cache-hinted load and store, each moving one element: out[i] = in[i] + i.
__global__ void hinted_copy(const int* in, int* out) {
  __stwb(&out[0], __ldca(&in[0]));
  __stcg(&out[1], __ldcg(&in[1]) + 1);
  __stcs(&out[2], __ldcs(&in[2]) + 2);
  __stwt(&out[3], __ldlu(&in[3]) + 3);
  __stcs(&out[4], __ldcv(&in[4]) + 4);
}

// Every thread adds 1 to a half and a bf16, (1, 2) to each pair, (1, 2) to a
// float2 and (1, 2, 3, 4) to a float4; and claims a 16-bit slot by atomicCAS,
// counting in `winners` the threads that found it free.
__global__ void contend_narrow(__half* h, __nv_bfloat16* b, __half2* h2, __nv_bfloat162* b2, float2* f2, float4* f4,
                               unsigned short* slot, int* winners) {
  const int id = int(blockIdx.x * blockDim.x + threadIdx.x);
  atomicAdd(h, __half(1.0f));
  atomicAdd(b, __nv_bfloat16(1.0f));
  atomicAdd(h2, __floats2half2_rn(1.0f, 2.0f));
  atomicAdd(b2, __floats2bfloat162_rn(1.0f, 2.0f));
  atomicAdd(f2, make_float2(1.0f, 2.0f));
  atomicAdd(f4, make_float4(1.0f, 2.0f, 3.0f, 4.0f));
  if (atomicCAS(slot, static_cast<unsigned short>(0), static_cast<unsigned short>(id + 1)) == 0) atomicAdd(winners, 1);
}

// counts: [block-scoped adds, system-scoped adds, CAS winners]: every
// thread adds 1 to its block's slot with atomicAdd_block (one slot a block)
// and to counts[1] with atomicAdd_system; one thread of all wins the CAS.
__global__ void scoped_counts(unsigned* per_block, unsigned* counts) {
  atomicAdd_block(&per_block[blockIdx.x], 1u);
  atomicAdd_system(&counts[0], 1u);
  if (atomicCAS_system(&counts[1], 0u, 1u) == 0u) atomicInc_block(&per_block[gridDim.x + blockIdx.x], 100u);
}

// olds[t] = the value thread t's atomicAdd of `add` found: the threads run
// one after another here, so thread t finds start + t · add, rounded at each step.
__global__ void add_half_in_turn(__half* sum, __half add, __half* olds) {
  olds[threadIdx.x] = atomicAdd(sum, add);
}

// Two clock64() readings with a loop between; and a __threadfence_system().
__global__ void read_clock(long long* stamps, float* sink) {
  stamps[0] = clock64();
  float x = 1.0f;
  for (int i = 0; i < 100000; ++i) x = x * 1.0000001f + 1e-7f;
  sink[0] = x;
  __threadfence_system();
  stamps[1] = clock64();
}

}  // namespace

TEST_CASE("atomics on 16-bit floats, their pairs, float2 and float4, and a 16-bit CAS, under contention") {
  const int blocks = 4, threads = 64, n = blocks * threads;  // 256: every partial sum is exact in half and bf16
  DeviceBuffer<__half> h(std::vector<__half>{__half(0.0f)});
  DeviceBuffer<__nv_bfloat16> b(std::vector<__nv_bfloat16>{__nv_bfloat16(0.0f)});
  DeviceBuffer<__half2> h2(std::vector<__half2>{__floats2half2_rn(0.0f, 0.0f)});
  DeviceBuffer<__nv_bfloat162> b2(std::vector<__nv_bfloat162>{__floats2bfloat162_rn(0.0f, 0.0f)});
  DeviceBuffer<float2> f2(std::vector<float2>{make_float2(0.0f, 0.0f)});
  DeviceBuffer<float4> f4(std::vector<float4>{make_float4(0.0f, 0.0f, 0.0f, 0.0f)});
  DeviceBuffer<unsigned short> slot(std::vector<unsigned short>{0});
  DeviceBuffer<int> winners(std::vector<int>{0});
  warpnet::simt::set_workers(2);  // blocks on two OS threads really race
  warpnet::simt::launch(contend_narrow, dim3(blocks), dim3(threads), 0, h.get(), b.get(), h2.get(), b2.get(), f2.get(),
                        f4.get(), slot.get(), winners.get());
  warpnet::simt::set_workers(0);
  CHECK(float(h.download()[0]) == float(n));
  CHECK(float(b.download()[0]) == float(n));
  CHECK(__low2float(h2.download()[0]) == float(n));
  CHECK(__high2float(h2.download()[0]) == float(2 * n));
  CHECK(__low2float(b2.download()[0]) == float(n));
  CHECK(__high2float(b2.download()[0]) == float(2 * n));
  const float2 g2 = f2.download()[0];
  CHECK((g2.x == float(n) && g2.y == float(2 * n)));
  const float4 g4 = f4.download()[0];
  CHECK((g4.x == float(n) && g4.y == float(2 * n) && g4.z == float(3 * n) && g4.w == float(4 * n)));
  CHECK(winners.download()[0] == 1);
  const unsigned short claimed = slot.download()[0];
  CHECK((claimed >= 1 && claimed <= n));
}

TEST_CASE("the _block and _system atomics update as the device's do") {
  const int blocks = 4, threads = 64;
  DeviceBuffer<unsigned> per_block(std::vector<unsigned>(2 * blocks, 0u)), counts(std::vector<unsigned>{0u, 0u});
  warpnet::simt::set_workers(2);
  warpnet::simt::launch(scoped_counts, dim3(blocks), dim3(threads), 0, per_block.get(), counts.get());
  warpnet::simt::set_workers(0);
  const std::vector<unsigned> b = per_block.download(), c = counts.download();
  for (int i = 0; i < blocks; ++i) CHECK(b[size_t(i)] == unsigned(threads));
  CHECK(c[0] == unsigned(blocks * threads));
  CHECK(c[1] == 1u);
  unsigned winners = 0;
  for (int i = blocks; i < 2 * blocks; ++i) winners += b[size_t(i)];
  CHECK(winners == 1u);
}

TEST_CASE("a half atomicAdd rounds each sum to nearest even and returns the old value") {
  // From 2048, where half's spacing is 2: 2048 + 1 is a tie, kept at 2048
  // (even) every time; 2048 + 3 = 2051 rounds to 2052.
  DeviceBuffer<__half> sum(std::vector<__half>{__half(2048.0f)}), olds(4);
  warpnet::simt::launch(add_half_in_turn, dim3(1), dim3(4), 0, sum.get(), __half(1.0f), olds.get());
  CHECK(float(sum.download()[0]) == 2048.0f);
  for (const __half old : olds.download()) CHECK(float(old) == 2048.0f);
  warpnet::simt::launch(add_half_in_turn, dim3(1), dim3(2), 0, sum.get(), __half(3.0f), olds.get());
  CHECK(float(sum.download()[0]) == 2056.0f);
  CHECK(float(olds.download()[1]) == 2052.0f);
}

TEST_CASE("clock64 only increases, and __threadfence_system is a fence") {
  DeviceBuffer<long long> stamps(2);
  DeviceBuffer<float> sink(1);
  warpnet::simt::launch(read_clock, dim3(1), dim3(1), 0, stamps.get(), sink.get());
  const auto t = stamps.download();
  CHECK(t[1] > t[0]);
}

TEST_CASE("atomics on int, unsigned and float stay exact under contention") {
  const int blocks = 8, threads = 128, n = blocks * threads;
  DeviceBuffer<int> counters(std::vector<int>{0, 0, -1, 1, 0, 0, 0, 0});
  DeviceBuffer<unsigned> bits(std::vector<unsigned>{0}), wrap(std::vector<unsigned>{0});
  DeviceBuffer<float> fsum(std::vector<float>{0.0f});
  warpnet::simt::set_workers(2);  // blocks on two OS threads really race
  warpnet::simt::launch(contend, dim3(blocks), dim3(threads), 0, counters.get(), bits.get(), fsum.get(), wrap.get());
  warpnet::simt::set_workers(0);
  const auto c = counters.download();
  CHECK(c[0] == 2 * n);
  CHECK(c[1] == -n);
  CHECK(c[2] == n - 1);
  CHECK(c[3] == -(n - 1));
  CHECK(c[5] == 1);
  CHECK(c[6] >= 1);
  CHECK(c[7] == 1);
  CHECK(bits.download()[0] == 0xffffffffu);
  CHECK(fsum.download()[0] == 0.5f * n);  // multiples of 0.5 up to 512 are exact in float
  CHECK(wrap.download()[0] == unsigned(n % 10));
}

TEST_CASE("a float atomicAdd flushes subnormal inputs and results to zero, as atom.add.f32 does") {
  const float tiny = 1e-40f;  // subnormal: below 2^-126
  REQUIRE(std::fpclassify(tiny) == FP_SUBNORMAL);
  // Each sum starts at +0: {a subnormal input}, {two normal inputs whose sum,
  // 2^-127, is subnormal}, {the same negated: -2^-127}, {-tiny}, {the
  // smallest normal float, kept}.
  DeviceBuffer<float> first(std::vector<float>{tiny, 0x1.8p-126f, -0x1.8p-126f, -tiny, 0x1p-126f});
  DeviceBuffer<float> second(std::vector<float>{0.0f, -0x1p-126f, 0x1p-126f, 0.0f, 0.0f});
  DeviceBuffer<float> sums(5);
  warpnet::simt::launch(add_pairs, dim3(1), dim3(5), 0, sums.get(), first.get(), second.get());
  const auto s = sums.download();
  CHECK(s[0] == 0.0f);
  CHECK(s[1] == 0.0f);  // the result flushed, its inputs were normal
  CHECK(!std::signbit(s[1]));
  CHECK(s[2] == 0.0f);
  CHECK(std::signbit(s[2]));  // a zero of the result's sign
  CHECK(s[3] == 0.0f);
  CHECK(!std::signbit(s[3]));  // -tiny flushed to -0, and +0 + -0 is +0
  CHECK(s[4] == 0x1p-126f);
}

TEST_CASE("fast-math and bit intrinsics match their definitions") {
  // __expf is std::exp here (src/simt/intrinsics.hpp), so nothing to compare;
  // a GPU's is within a few ulp, so kernels' tests must allow that.
  CHECK(__fdividef(1.0f, 4.0f) == 0.25f);
  CHECK(rsqrtf(4.0f) == 0.5f);
  CHECK(fmaf(2.0f, 3.0f, 1.0f) == 7.0f);
  CHECK(__saturatef(1.5f) == 1.0f);
  CHECK(__saturatef(-0.5f) == 0.0f);
  CHECK(__saturatef(std::nanf("")) == 0.0f);  // PTX's .sat flushes NaN to +0
  CHECK(__popc(0xf0f0u) == 8);
  CHECK(__clz(1) == 31);
  CHECK(__ffs(0) == 0);
  CHECK(__ffs(8) == 4);
  CHECK(__brev(1u) == 0x80000000u);
  CHECK(__umulhi(0x80000000u, 4u) == 2u);
  CHECK(__float_as_uint(1.0f) == 0x3f800000u);
  CHECK(__int_as_float(0x40000000) == 2.0f);
  CHECK(min(3, -2) == -2);
  CHECK(max(2.5f, 1.0f) == 2.5f);
  CHECK(warpnet::ceil_div(129, 32) == 5);
  // A 64-bit count stays 64-bit: 2^33 + 1 items in blocks of 256.
  static_assert(std::is_same_v<decltype(warpnet::ceil_div(int64_t{1}, 256)), int64_t>);
  CHECK(warpnet::ceil_div((int64_t{1} << 33) + 1, 256) == (int64_t{1} << 25) + 1);
  CHECK(warpnet::ceil_div(-5, 4) == 0);  // a negative count: none, as a step loop expects
}

TEST_CASE("integer intrinsics match their definitions: funnel shifts, byte permutes, packed dot products") {
  // hi:lo = 0x0123456789abcdef.
  CHECK(__funnelshift_l(0x89abcdefu, 0x01234567u, 8) == 0x23456789u);
  CHECK(__funnelshift_l(0x89abcdefu, 0x01234567u, 40) == 0x23456789u);  // 40 mod 32
  CHECK(__funnelshift_lc(0x89abcdefu, 0x01234567u, 40) == 0x89abcdefu);  // clamped to 32: lo
  CHECK(__funnelshift_r(0x89abcdefu, 0x01234567u, 8) == 0x6789abcdu);
  CHECK(__funnelshift_rc(0x89abcdefu, 0x01234567u, 40) == 0x01234567u);  // clamped to 32: hi
  // Byte k of y:x holds k; the selector's nibbles pick bytes 3, 7, 2, 5 and
  // only their low 3 bits count (0xd is 5), as libdevice's __nv_byte_perm says.
  CHECK(__byte_perm(0x03020100u, 0x07060504u, 0x5273u) == 0x05020703u);
  CHECK(__byte_perm(0x03020100u, 0x07060504u, 0xdu) == 0x00000005u);
  // Signed bytes (1, -2, 3, -4) . (5, 6, -7, 8) + 100 = 5 - 12 - 21 - 32 + 100.
  CHECK(__dp4a(int(0xfc03fe01u), int(0x08f90605u), 100) == 40);
  // The same bits unsigned: 1·5 + 254·6 + 3·249 + 252·8 + 100.
  CHECK(__dp4a(0xfc03fe01u, 0x08f90605u, 100u) == 5u + 1524u + 747u + 2016u + 100u);
  // Halves (-3, 1000) against bytes 0-1 (2, -1) or 2-3 (4, 5).
  CHECK(__dp2a_lo(int(0x03e8fffdu), int(0x0504ff02u), 7) == -6 - 1000 + 7);
  CHECK(__dp2a_hi(int(0x03e8fffdu), int(0x0504ff02u), 7) == -12 + 5000 + 7);
  CHECK(__dp2a_lo(0x03e8fffdu, 0x0504ff02u, 7u) == 65533u * 2u + 1000u * 255u + 7u);
  CHECK(__hadd(2147483647, 1) == 1073741824);  // no overflow on the way
  CHECK(__rhadd(-3, 0) == -1);
  CHECK(__uhadd(0xffffffffu, 1u) == 0x80000000u);
  CHECK(__urhadd(1u, 2u) == 2u);
  CHECK(__sad(-5, 7, 3u) == 15u);
  CHECK(__usad(2u, 9u, 1u) == 8u);
  CHECK(__umul64hi(0x8000000000000000ull, 6ull) == 3ull);
  CHECK(__mul64hi(-1ll, 1ll) == -1ll);  // the high half of -1 is all ones
}

TEST_CASE("the cache-hinted loads and stores move the element they name") {
  DeviceBuffer<int> in(std::vector<int>{10, 20, 30, 40, 50}), out(5);
  warpnet::simt::launch(hinted_copy, dim3(1), dim3(1), 0, in.get(), out.get());
  CHECK(out.download() == std::vector<int>{10, 21, 32, 43, 54});
}

TEST_CASE("dynamic shared memory is per block and sized by the launch") {
  DeviceBuffer<float> out(96);
  warpnet::simt::launch(dynamic_neighbour, dim3(1), dim3(96), 96 * sizeof(float), out.get());
  const auto v = out.download();
  for (int t = 0; t < 96; ++t) CHECK(v[t] == float((t + 1) % 96) * 1.5f);
}

TEST_CASE("float4 keeps CUDA's size and alignment and copies whole") {
  static_assert(sizeof(float4) == 16 && alignof(float4) == 16 && alignof(int2) == 8);
  DeviceBuffer<float4> in(std::vector<float4>{make_float4(1, 2, 3, 4)}), out(2);
  warpnet::simt::launch(vector_copy, dim3(1), dim3(1), 0, in.get(), out.get());
  const auto v = out.download();
  CHECK((v[0].x == 1 && v[0].y == 2 && v[0].z == 3 && v[0].w == 4));
  CHECK((v[1].x == 4 && v[1].y == 3 && v[1].z == 2 && v[1].w == 1));
}

TEST_CASE("__fmul_rn and __fadd_rn round each step; they never fuse into an FMA") {
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: the product rounds to 1 + 2^-11, so
  // the separate steps give 0 where a fused multiply-add keeps 2^-24. The
  // inputs come through a volatile so the compiler cannot fold them.
  volatile float a_in = 1.0f + 0x1p-12f, c_in = -(1.0f + 0x1p-11f);
  const float a = a_in, c = c_in;
  CHECK(std::fma(a, a, c) == 0x1p-24f);
  CHECK(__fadd_rn(__fmul_rn(a, a), c) == 0.0f);
}
