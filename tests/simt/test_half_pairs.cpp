// __half2 and __nv_bfloat162 as kernels see them (CUDA's headers with the
// toolkit, warpnet's half_pairs.hpp without), and the fused multiply-adds
// the emulator adds to both (half_fma.hpp): bit patterns worked out by hand
// from the formats, then pairs moved between lanes by shuffles.
#include <doctest/doctest.h>

#include <cmath>
#include <type_traits>
#include <vector>

#include "tests/simt/device_buffer.hpp"

namespace {

unsigned bits(__half h) { return __half_raw(h).x; }
unsigned bits(__nv_bfloat16 b) { return __nv_bfloat16_raw(b).x; }
__half half_of(unsigned short b) { return __half(__half_raw{b}); }
__nv_bfloat16 bf16_of(unsigned short b) { return __nv_bfloat16(__nv_bfloat16_raw{b}); }

// (lo, hi) as a Pair, each rounded to nearest: CUDA names the two makers apart.
template <class Pair>
Pair pair_of(float lo, float hi) {
  if constexpr (std::is_same_v<Pair, __half2>) {
    return __floats2half2_rn(lo, hi);
  } else {
    return __floats2bfloat162_rn(lo, hi);
  }
}

// Each lane packs its two inputs, scales them by __hfma2 and sums the
// warp's pairs by a butterfly of __shfl_xor_sync on the pair itself: every
// lane ends with the same two sums, low and high apart.
template <class Pair>
__global__ void pair_warp_sum(const float* in, float* out, float scale, float shift) {
  const int lane = int(threadIdx.x);
  Pair v = __hfma2(pair_of<Pair>(in[2 * lane], in[2 * lane + 1]), pair_of<Pair>(scale, scale),
                   pair_of<Pair>(shift, shift));
  for (int offset = 16; offset > 0; offset /= 2) v = __hadd2(v, __shfl_xor_sync(0xffffffffu, v, offset));
  out[2 * lane] = __low2float(v);
  out[2 * lane + 1] = __high2float(v);
}

// Runs pair_warp_sum<Pair> on 64 values and checks every lane's two sums
// against the host's, computed in the butterfly's order: lane l's partial
// after the step with `offset` is its own plus lane l ^ offset's.
template <class Pair>
void check_pair_warp_sum(const std::vector<float>& values) {
  const float scale = 0.5f, shift = 1.0f;
  DeviceBuffer<float> in(values), out(64);
  warpnet::launch_kernel(pair_warp_sum<Pair>, dim3(1), dim3(32), 0, in.get(), out.get(), scale, shift);
  REQUIRE(cudaGetLastError() == cudaSuccess);
  std::vector<Pair> lanes(32);
  for (int l = 0; l < 32; ++l)
    lanes[l] = __hfma2(pair_of<Pair>(values[2 * l], values[2 * l + 1]), pair_of<Pair>(scale, scale),
                       pair_of<Pair>(shift, shift));
  for (int offset = 16; offset > 0; offset /= 2) {
    std::vector<Pair> next(32);
    for (int l = 0; l < 32; ++l) next[l] = __hadd2(lanes[l], lanes[l ^ offset]);
    lanes = next;
  }
  const std::vector<float> got = out.download();
  for (int l = 0; l < 32; ++l) {
    CHECK(got[2 * l] == __low2float(lanes[l]));
    CHECK(got[2 * l + 1] == __high2float(lanes[l]));
  }
  // The low and high sums are different numbers: a shuffle that swapped or mixed halves would show.
  CHECK(got[0] != got[1]);
}

}  // namespace

TEST_CASE("half pairs: each lane of __hadd2 and __hmul2 is rounded once, to nearest even") {
  // 2048 + 1 is a tie between 2048 and 2050 (half's spacing there is 2): even
  // is 2048. 1 + 3·2^-11 lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9.
  const __half2 sum = __hadd2(__floats2half2_rn(2048.0f, 1.0f), __floats2half2_rn(1.0f, 3 * 0x1p-11f));
  CHECK(bits(__low2half(sum)) == 0x6800);   // 2048
  CHECK(bits(__high2half(sum)) == 0x3C02);  // 1 + 2^-9
  // (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20: the 2^-20 is under half an ulp.
  const __half2 square = __hmul2(__float2half2_rn(1 + 0x1p-10f), __float2half2_rn(1 + 0x1p-10f));
  CHECK(bits(__low2half(square)) == 0x3C02);
  CHECK(bits(__high2half(square)) == 0x3C02);
  // bf16 keeps 8 significant bits: 256 + 1 is a tie, even is 256; 1 + 3·2^-8 goes up to 1 + 2^-6.
  const __nv_bfloat162 b = __hadd2(__floats2bfloat162_rn(256.0f, 1.0f), __floats2bfloat162_rn(1.0f, 3 * 0x1p-8f));
  CHECK(bits(__low2bfloat16(b)) == 0x4380);   // 256
  CHECK(bits(__high2bfloat16(b)) == 0x3F82);  // 1 + 2^-6
  CHECK(__low2float(__hsub2(__floats2half2_rn(1.0f, 2.0f), __floats2half2_rn(0.5f, 3.0f))) == 0.5f);
  CHECK(__high2float(__hsub2(__floats2half2_rn(1.0f, 2.0f), __floats2half2_rn(0.5f, 3.0f))) == -1.0f);
}

TEST_CASE("half pairs: making, swapping and taking apart pairs keeps each lane's bits") {
  const __half2 h = __halves2half2(half_of(0x3C00), half_of(0xC000));  // (1, -2)
  CHECK(bits(__low2half(h)) == 0x3C00);
  CHECK(bits(__high2half(h)) == 0xC000);
  CHECK(bits(__low2half(__lowhigh2highlow(h))) == 0xC000);
  const float2 f = __half22float2(h);
  CHECK(f.x == 1.0f);
  CHECK(f.y == -2.0f);
  CHECK(bits(__high2half(__float22half2_rn(make_float2(0.1f, 65504.0f)))) == 0x7BFF);
  CHECK(bits(__low2half(__float22half2_rn(make_float2(0.1f, 65504.0f)))) == 0x2E66);
  const __nv_bfloat162 b = __halves2bfloat162(bf16_of(0x3F80), bf16_of(0x4040));  // (1, 3)
  CHECK(__bfloat1622float2(b).y == 3.0f);
  CHECK(bits(__high2bfloat16(__bfloat162bfloat162(bf16_of(0x4040)))) == 0x4040);
  // Sign flips touch the sign bit alone.
  CHECK(bits(__low2half(__hneg2(h))) == 0xBC00);
  CHECK(bits(__high2half(__habs2(h))) == 0x4000);
}

TEST_CASE("half pairs: max and min pass over one NaN, and +0 is the greater zero") {
  const __half nan = half_of(0x7E00), one = half_of(0x3C00), plus_zero = half_of(0x0000), minus_zero = half_of(0x8000);
  CHECK(bits(__hmax(nan, one)) == 0x3C00);
  CHECK(bits(__hmin(one, nan)) == 0x3C00);
  CHECK(std::isnan(float(__hmax(nan, nan))));
  CHECK(bits(__hmax(minus_zero, plus_zero)) == 0x0000);
  CHECK(bits(__hmax(plus_zero, minus_zero)) == 0x0000);
  CHECK(bits(__hmin(plus_zero, minus_zero)) == 0x8000);
  const __half2 m = __hmax2(__halves2half2(nan, minus_zero), __halves2half2(one, plus_zero));
  CHECK(bits(__low2half(m)) == 0x3C00);
  CHECK(bits(__high2half(m)) == 0x0000);
}

TEST_CASE("half pairs: operators on __half and __nv_bfloat16 give the format back, rounded at each step") {
  static_assert(std::is_same_v<decltype(__half() + __half()), __half>);
  static_assert(std::is_same_v<decltype(__nv_bfloat16() * __nv_bfloat16()), __nv_bfloat16>);
  // As in __hfma's case below: the product rounds to 1 + 2^-9 before the
  // sum, so a * a + c is 0 (in float it would be 2^-20).
  const __half a = __half(1 + 0x1p-10), c = __half(-(1 + 0x1p-9));
  CHECK(bits(a * a + c) == 0x0000);
  __half s = a;
  s += c;
  CHECK(float(s) == -0x1p-10f);
  CHECK(a > c);
  CHECK(!(a == c));
  const __nv_bfloat16 b = __nv_bfloat16(256.0f);
  CHECK(bits(b + __nv_bfloat16(1.0f)) == 0x4380);  // a tie: 256, the even one
}

TEST_CASE("half pairs: __hfma rounds a·b + c once, not the product first") {
  // (1 + 2^-10)^2 - (1 + 2^-9) = 2^-20 exactly, a half subnormal (16 · 2^-24).
  // Multiplied and added apart, the product rounds to 1 + 2^-9 and the sum is 0.
  const __half a = __half(1 + 0x1p-10), c = __half(-(1 + 0x1p-9));
  CHECK(bits(__hfma(a, a, c)) == 0x0010);
  CHECK(bits(__hadd(__hmul(a, a), c)) == 0x0000);
  const __half2 fused = __hfma2(__halves2half2(a, __half(0.5f)), __halves2half2(a, __half(4.0f)),
                                __halves2half2(c, __half(1.0f)));
  CHECK(bits(__low2half(fused)) == 0x0010);
  CHECK(__high2float(fused) == 3.0f);  // 0.5 · 4 + 1
}

TEST_CASE("half pairs: a bf16 fma a hair past a tie rounds away from it (rounding to odd in between)") {
  // (1 + 2^-6)(1.25) = 1.26953125 = 325/256, halfway between bf16's 1.265625
  // (mantissa 34, even) and 1.2734375 (35). Adding +2^-100 puts the exact sum
  // just above the tie: it rounds up. Rounded to nearest in double first,
  // the 2^-100 would vanish and the tie go to the even one.
  const __nv_bfloat16 a = bf16_of(0x3F82), b = bf16_of(0x3FA0), up = bf16_of(0x0D80), down = bf16_of(0x8D80);
  REQUIRE(float(up) == 0x1p-100f);
  CHECK(bits(__hfma(a, b, up)) == 0x3FA3);
  CHECK(bits(__hfma(a, b, down)) == 0x3FA2);
  CHECK(bits(__hfma(a, b, bf16_of(0x0000))) == 0x3FA2);  // the tie itself: even
  // Rounded to nearest in double first, as __hfma must not: the tie, and the even neighbour.
  CHECK(bits(__nv_bfloat16(double(float(a)) * double(float(b)) + 0x1p-100)) == 0x3FA2);
  const __nv_bfloat162 pair =
      __hfma2(__halves2bfloat162(a, a), __halves2bfloat162(b, b), __halves2bfloat162(up, down));
  CHECK(bits(__low2bfloat16(pair)) == 0x3FA3);
  CHECK(bits(__high2bfloat16(pair)) == 0x3FA2);
}

TEST_CASE("half pairs: a warp shuffles __half2 and __nv_bfloat162 whole, both halves to the same lane") {
  std::vector<float> values(64);
  for (int i = 0; i < 64; ++i) values[i] = float(i % 7) * 0.25f - float(i % 3);
  SUBCASE("__half2") { check_pair_warp_sum<__half2>(values); }
  SUBCASE("__nv_bfloat162") { check_pair_warp_sum<__nv_bfloat162>(values); }
}
