// numeric/ against CUDA's own host-side conversions (cuda_fp16.h, cuda_bf16.h,
// cuda_fp8.h, cuda_fp4.h compile with plain g++ and convert on the CPU): every
// fp16, bf16, fp8, fp4 and e8m0 code decoded, and a large sample of floats
// encoded (random fp32 bit patterns, which cover every exponent equally, plus
// every midpoint between codes and its two neighbouring floats). Compiled
// wherever the toolkit's headers are found at configure time
// (src/numeric/CMakeLists.txt), GPU build or not; elsewhere it says it skipped.
#include <doctest/doctest.h>

#if WARPNET_NUMERIC_CUDA_HEADERS
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#if __has_include(<cuda_fp4.h>)
#include <cuda_fp4.h>
#define WARPNET_HAVE_CUDA_FP4 1
#endif

#include <cmath>
#include <functional>

#include "tests/numeric/numeric_support.hpp"

using namespace warpnet::numeric;
using namespace warpnet::numeric::test;

namespace {

float half_to_float(__half_raw h) { return __half2float(__half(h)); }

// The floats to convert: 2^22 random bit patterns (seeded), and for each of
// `midpoints_of` the midpoints between consecutive codes with the floats on
// either side (only those a float holds exactly: all of them for fp8/fp4/fp16/bf16).
std::vector<float> float_sample(std::initializer_list<const Format*> midpoints_of) {
  warpnet::Rng rng(2718);
  std::vector<float> xs;
  for (int i = 0; i < 1 << 22; ++i) xs.push_back(f32_from(uint32_t(rng.next_u64())));
  for (const Format* f : midpoints_of)
    for (uint32_t c = 0; c < max_code(*f); ++c) {
      const float mid = float((double(decode(*f, c)) + decode(*f, c + 1)) / 2);
      for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
        xs.push_back(x);
        xs.push_back(-x);
      }
    }
  for (float x : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -1e30f}) xs.push_back(x);
  return xs;
}

// Codes differ: the number of floats, the first few printed.
int encode_mismatches(const std::vector<float>& xs, const char* what, const std::function<uint32_t(float)>& ours,
                      const std::function<uint32_t(float)>& cuda) {
  int bad = 0;
  for (float x : xs) {
    const uint32_t a = ours(x), b = cuda(x);
    if (a != b && ++bad <= 5) MESSAGE(what, ": ", x, " (", hex(f32_bits(x)), ") -> ", hex(a), ", CUDA ", hex(b));
  }
  return bad;
}

bool same_value(float a, float b) { return (std::isnan(a) && std::isnan(b)) || f32_bits(a) == f32_bits(b); }

}  // namespace

TEST_CASE("numeric vs CUDA: every fp16, bf16, e4m3, e5m2 (and e2m1, e8m0) code decodes to CUDA's value") {
  int bad = 0;
  for (uint32_t c = 0; c < 1u << 16; ++c) {
    bad += !same_value(decode(kFp16, c), half_to_float(__half_raw{uint16_t(c)}));
    bad += !same_value(decode(kBf16, c), __bfloat162float(__nv_bfloat16(__nv_bfloat16_raw{uint16_t(c)})));
  }
  for (uint32_t c = 0; c < 256; ++c) {
    bad += !same_value(decode(kE4M3, c), half_to_float(__nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(c), __NV_E4M3)));
    bad += !same_value(decode(kE5M2, c), half_to_float(__nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(c), __NV_E5M2)));
  }
#if WARPNET_HAVE_CUDA_FP4
  for (uint32_t c = 0; c < 16; ++c)
    bad += !same_value(decode(kE2M1, c), half_to_float(__nv_cvt_fp4_to_halfraw(__nv_fp4_storage_t(c), __NV_E2M1)));
#endif
#if CUDART_VERSION >= 12080  // e8m0 conversions arrived in CUDA 12.8
  for (uint32_t c = 0; c < 256; ++c)
    bad +=
        !same_value(decode(kE8M0, c), __bfloat162float(__nv_bfloat16(__nv_cvt_e8m0_to_bf16raw(__nv_fp8_storage_t(c)))));
#endif
  CHECK(bad == 0);
}

TEST_CASE("numeric vs CUDA: fp32 -> fp16 (__float2half_rn) and bf16 (__float2bfloat16_rn)") {
  const std::vector<float> xs = float_sample({&kFp16, &kBf16});
  MESSAGE(xs.size(), " floats, seed 2718");
  CHECK(encode_mismatches(
            xs, "fp16", [](float x) { return encode(kFp16, x); },
            [](float x) { return uint32_t(__half_raw(__float2half_rn(x)).x); }) == 0);
  CHECK(encode_mismatches(
            xs, "bf16", [](float x) { return encode(kBf16, x); },
            [](float x) { return uint32_t(__nv_bfloat16_raw(__float2bfloat16_rn(x)).x); }) == 0);
}

TEST_CASE("numeric vs CUDA: fp32 -> fp16 and bf16 toward zero (__float2half_rz, __float2bfloat16_rz)") {
  // Past the largest finite value toward zero stays finite: 65536 -> 65504.
  const std::vector<float> xs = float_sample({&kFp16, &kBf16});
  CHECK(encode_mismatches(
            xs, "fp16 toward zero", [](float x) { return encode(kFp16, x, {Round::toward_zero}); },
            [](float x) { return uint32_t(__half_raw(__float2half_rz(x)).x); }) == 0);
  CHECK(encode_mismatches(
            xs, "bf16 toward zero", [](float x) { return encode(kBf16, x, {Round::toward_zero}); },
            [](float x) { return uint32_t(__nv_bfloat16_raw(__float2bfloat16_rz(x)).x); }) == 0);
  CHECK(encode(kFp16, 70000.0, {Round::toward_zero}) == 0x7BFF);
  CHECK(encode(kFp16, -INFINITY, {Round::toward_zero}) == 0xFC00);  // an infinity is exact
}

TEST_CASE("numeric vs CUDA: fp32 -> e4m3 and e5m2 (__nv_cvt_float_to_fp8), saturating and not") {
  const std::vector<float> xs = float_sample({&kE4M3, &kE5M2});
  for (auto [f, interpretation] : {std::pair{&kE4M3, __NV_E4M3}, std::pair{&kE5M2, __NV_E5M2}}) {
    for (auto [ours, theirs] :
         {std::pair{Saturation::none, __NV_NOSAT}, std::pair{Saturation::finite, __NV_SATFINITE}}) {
      CAPTURE(f->name);
      CAPTURE(int(ours));
      CHECK(encode_mismatches(
                xs, f->name, [&](float x) { return encode(*f, x, {}, ours); },
                [&](float x) { return uint32_t(__nv_cvt_float_to_fp8(x, theirs, interpretation)); }) == 0);
    }
  }
}

#if WARPNET_HAVE_CUDA_FP4
TEST_CASE("numeric vs CUDA: fp32 -> e2m1 (__nv_cvt_float_to_fp4), to nearest and toward zero") {
  const std::vector<float> xs = float_sample({&kE2M1});
  CHECK(encode_mismatches(
            xs, "e2m1 nearest", [](float x) { return encode(kE2M1, x, {}, Saturation::finite); },
            [](float x) { return uint32_t(__nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest)); }) == 0);
  CHECK(encode_mismatches(
            xs, "e2m1 toward zero", [](float x) { return encode(kE2M1, x, {Round::toward_zero}, Saturation::finite); },
            [](float x) { return uint32_t(__nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundZero)); }) == 0);
}
#endif

#if CUDART_VERSION >= 12080
TEST_CASE("numeric vs CUDA: every non-negative bf16 -> e8m0 toward zero (__nv_cvt_bfloat16raw_to_e8m0)") {
  // CUDA's e8m0 conversion ignores the sign (a negative is NaN here), so the
  // non-negative codes, inf and the NaNs included.
  int bad = 0;
  for (uint32_t c = 0; c < 0x8000; ++c)
    for (auto [ours, theirs] :
         {std::pair{Saturation::none, __NV_NOSAT}, std::pair{Saturation::finite, __NV_SATFINITE}}) {
      const uint32_t a = encode(kE8M0, decode(kBf16, c), {Round::toward_zero}, ours);
      const uint32_t b = __nv_cvt_bfloat16raw_to_e8m0(__nv_bfloat16_raw{uint16_t(c)}, theirs, cudaRoundZero);
      if (a != b && ++bad <= 5) MESSAGE("bf16 ", hex(c), " -> ", hex(a), ", CUDA ", hex(b));
    }
  CHECK(bad == 0);
}
#endif

#else

TEST_CASE("numeric vs CUDA: skipped") {
  MESSAGE(
      "skipped: no CUDA toolkit headers (cuda_fp8.h) were found when this build was configured, so numeric/ "
      "is not compared with CUDA's host conversions; install the toolkit (/usr/local/cuda) and reconfigure");
}

#endif
