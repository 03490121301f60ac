// half, bfloat16 and fp8 as kernels see them (CUDA's headers with the toolkit,
// warpnet's own without): conversions against bit patterns worked out from
// the formats' definitions, rounding ties to even, overflow and subnormals.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "tests/simt/device_buffer.hpp"

namespace {

unsigned half_bits(float f) { return __half_raw(__float2half(f)).x; }
unsigned bf16_bits(float f) { return __nv_bfloat16_raw(__float2bfloat16(f)).x; }
unsigned e4m3_bits(float f) { return __nv_fp8_e4m3(f).__x; }
unsigned e5m2_bits(float f) { return __nv_fp8_e5m2(f).__x; }
float from_half(unsigned bits) { return __half2float(__half(__half_raw{static_cast<unsigned short>(bits)})); }

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// One thread per element: float -> half -> float, through device memory.
__global__ void round_trip_half(const float* in, __half* as_half, float* back, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  as_half[i] = __float2half(in[i]);
  back[i] = __half2float(as_half[i]);
}

}  // namespace

TEST_CASE("low precision: fp16 bit patterns (1 sign, 5 exponent bits with bias 15, 10 mantissa bits)") {
  CHECK(half_bits(1.0f) == 0x3C00);
  CHECK(half_bits(-2.0f) == 0xC000);
  CHECK(half_bits(0.1f) == 0x2E66);          // 0.0999755859375, the nearest
  CHECK(half_bits(1.0f / 3) == 0x3555);
  CHECK(half_bits(65504.0f) == 0x7BFF);      // the largest finite
  CHECK(half_bits(70000.0f) == 0x7C00);      // past it: inf
  CHECK(half_bits(-0.0f) == 0x8000);
  CHECK(half_bits(0x1p-24f) == 0x0001);      // the smallest subnormal
  CHECK(half_bits(0x1p-26f) == 0x0000);      // below half of it: zero
  CHECK(half_bits(2049.0f) == 0x6800);       // spacing 2 at 2048: a tie rounds to even (2048)
  CHECK(half_bits(2051.0f) == 0x6802);       // and this one up to 2052
  CHECK(from_half(0x3555) == 0.333251953125f);
  CHECK(std::isinf(from_half(0x7C00)));
  CHECK(std::isnan(__half2float(__float2half(kNaN))));
}

TEST_CASE("low precision: bf16 keeps float's 8 exponent bits and rounds the mantissa to 7") {
  CHECK(bf16_bits(1.0f) == 0x3F80);
  CHECK(bf16_bits(3.14159265f) == 0x4049);   // 0x40490FDB: the dropped half is below a tie
  CHECK(bf16_bits(1.0f / 3) == 0x3EAB);      // 0x3EAAAAAB: above a tie, rounds up
  CHECK(bf16_bits(-0.0f) == 0x8000);
  CHECK(bf16_bits(1e38f) == 0x7E96);         // bf16 reaches float's range
  CHECK(__bfloat162float(__float2bfloat16(1.0f / 3)) == 0.333984375f);
  CHECK(std::isnan(__bfloat162float(__float2bfloat16(kNaN))));
}

TEST_CASE("low precision: fp8 e4m3 (bias 7, no inf, max 448) and e5m2 (bias 15, max 57344) saturate") {
  CHECK(e4m3_bits(1.0f) == 0x38);
  CHECK(e4m3_bits(-1.5f) == 0xBC);
  CHECK(e4m3_bits(448.0f) == 0x7E);
  CHECK(e4m3_bits(1000.0f) == 0x7E);         // clamped to the largest finite
  CHECK(e4m3_bits(0x1p-9f) == 0x01);         // the smallest subnormal
  CHECK(e4m3_bits(0.3f) == 0x2A);            // 0.3 = 1.2 * 2^-2 -> 1.25 * 2^-2: field 5, mantissa 010
  CHECK(float(__nv_fp8_e4m3(0.3f)) == 0.3125f);
  CHECK(std::isnan(float(__nv_fp8_e4m3(kNaN))));
  CHECK(e5m2_bits(1.0f) == 0x3C);
  CHECK(e5m2_bits(1.5f) == 0x3E);
  CHECK(e5m2_bits(57344.0f) == 0x7B);
  CHECK(e5m2_bits(1e6f) == 0x7B);
  CHECK(e5m2_bits(0x1p-16f) == 0x01);
  CHECK(float(__nv_fp8_e5m2(0.3f)) == 0.3125f);  // 0.3 -> 1.25 * 2^-2 with 2 mantissa bits too
}

TEST_CASE("low precision: a double is rounded once, not through float, as CUDA's double constructors do") {
  // Each value is a hair above a tie of the narrow format; rounded to float
  // first, the hair is lost and the tie goes to the even neighbour.
  CHECK(__half_raw(__half(1.0 + 0x1p-11 + 0x1p-40)).x == 0x3C01);
  CHECK(__half_raw(__half(float(1.0 + 0x1p-11 + 0x1p-40))).x == 0x3C00);
  CHECK(__nv_bfloat16_raw(__nv_bfloat16(1.0 + 0x1p-8 + 0x1p-40)).x == 0x3F81);
  CHECK(__nv_fp8_e4m3(1.0625 + 0x1p-30).__x == 0x39);  // 1.125
  CHECK(__nv_fp8_e5m2(1.125 + 0x1p-30).__x == 0x3D);   // 1.25
  // Integers: exact where the format holds them; fp8 saturates.
  CHECK(__half_raw(__half(3)).x == 0x4200);
  CHECK(__nv_bfloat16_raw(__nv_bfloat16(-2)).x == 0xC000);
  CHECK(__nv_fp8_e4m3(500).__x == 0x7E);
}

TEST_CASE("low precision: half values in a kernel's device memory round-trip as on the host") {
  const std::vector<float> values{1.0f, 0.1f, 65504.0f, 70000.0f, 0x1p-24f, 2049.0f, -3.0f};
  const int n = int(values.size());
  DeviceBuffer<float> in(values), back(values.size());
  DeviceBuffer<__half> halves(values.size());
  warpnet::launch_kernel(round_trip_half, dim3(1), dim3(32), 0, in.get(), halves.get(), back.get(), n);
  REQUIRE(cudaGetLastError() == cudaSuccess);
  const auto got = back.download();
  for (int i = 0; i < n; ++i) CHECK(got[i] == __half2float(__float2half(values[i])));
  CHECK(__half_raw(halves.download()[2]).x == 0x7BFF);
}
