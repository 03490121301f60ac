// Rounding to nearest, ties to even, at every midpoint between consecutive
// codes (e4m3, e5m2, e2m1, and all 2^15 of fp16 and bf16); the other modes at
// the same points; overflow and saturation per format; subnormals and
// underflow; and conversions checked against references outside numeric/:
// C++'s double -> float cast, the compiler's _Float16, and integer rounding of
// fp32 bits for bf16 and tf32.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "tests/numeric/numeric_support.hpp"

using namespace warpnet::numeric;
using namespace warpnet::numeric::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr Rounding kAway{Round::nearest_away}, kZero{Round::toward_zero};

// Between each pair of consecutive finite codes c, c+1 (both signs): the
// midpoint goes to the even code, a hair above it to c+1, a hair below to c;
// nearest_away takes c+1 at the midpoint, toward_zero c just below c+1.
// Returns the number of failures (the first few printed).
int midpoint_failures(const Format& f) {
  int bad = 0;
  auto expect = [&](double x, Rounding r, uint32_t want, const char* what) {
    const uint32_t got = encode(f, x, r);
    if (got != want && ++bad <= 5) MESSAGE(f.name, " ", what, ": ", x, " -> ", hex(got), ", expected ", hex(want));
  };
  for (uint32_t c = 0; c < max_code(f); ++c) {
    const double lo = decode(f, c), hi = decode(f, c + 1), mid = (lo + hi) / 2;  // exact in double
    for (uint32_t sign : {0u, sign_bit(f)}) {
      const double s = sign ? -1 : 1;
      expect(s * mid, {}, sign | (c % 2 == 0 ? c : c + 1), "midpoint");
      expect(s * std::nextafter(mid, kInf), {}, sign | (c + 1), "above the midpoint");
      expect(s * std::nextafter(mid, 0.0), {}, sign | c, "below the midpoint");
      expect(s * mid, kAway, sign | (c + 1), "midpoint, ties away");
      expect(s * std::nextafter(hi, 0.0), kZero, sign | c, "below the upper code, toward zero");
    }
  }
  return bad;
}

}  // namespace

TEST_CASE("numeric: ties to even at every midpoint between consecutive e4m3, e5m2 and e2m1 codes") {
  for (const Format* f : {&kE4M3, &kE5M2, &kE2M1}) {
    CAPTURE(f->name);
    CHECK(midpoint_failures(*f) == 0);
  }
}

TEST_CASE("numeric: ties to even at every midpoint between consecutive fp16 and bf16 codes (all 2^15)") {
  for (const Format* f : {&kFp16, &kBf16}) {
    CAPTURE(f->name);
    CHECK(midpoint_failures(*f) == 0);
  }
}

TEST_CASE("numeric: overflow and saturation, format by format (OFP8's saturating and non-saturating modes)") {
  constexpr Saturation none = Saturation::none, sat = Saturation::finite;
  // e4m3: max 448 = S.1111.110 (even), the next step would be 480: 464 is a tie back to 448.
  CHECK(encode(kE4M3, 464, {}, none) == 0x7E);
  CHECK(encode(kE4M3, std::nextafter(464.0, kInf), {}, none) == 0x7F);  // NaN: e4m3 has no inf
  CHECK(encode(kE4M3, -1e9, {}, none) == 0xFF);
  CHECK(encode(kE4M3, 1e9, {}, sat) == 0x7E);
  CHECK(encode(kE4M3, -kInf, {}, sat) == 0xFE);
  CHECK(encode(kE4M3, kInf, {}, none) == 0x7F);
  // e5m2: max 57344 = S.11110.11 (odd): the tie at 61440 rounds to even, past the max.
  CHECK(encode(kE5M2, 61440, {}, none) == 0x7C);  // inf
  CHECK(encode(kE5M2, std::nextafter(61440.0, 0.0), {}, none) == 0x7B);
  CHECK(encode(kE5M2, 61440, {}, sat) == 0x7B);
  CHECK(encode(kE5M2, -kInf, {}, none) == 0xFC);
  CHECK(encode(kE5M2, -kInf, {}, sat) == 0xFB);
  // e2m1: no inf, no NaN: always the max, 6.
  CHECK(encode(kE2M1, 7, {}, none) == 0x7);
  CHECK(encode(kE2M1, -100, {}, none) == 0xF);
  CHECK(encode(kE2M1, kInf, {}, none) == 0x7);
  CHECK(encode(kE2M1, std::nan(""), {}, none) == 0x7);  // as CUDA's __nv_cvt_float_to_fp4
  // fp16: 65520 is the tie between 65504 (odd mantissa) and 65536: inf.
  CHECK(encode(kFp16, 65520, {}, none) == 0x7C00);
  CHECK(encode(kFp16, std::nextafter(65520.0, 0.0), {}, none) == 0x7BFF);
  CHECK(encode(kFp16, 1e30, {}, sat) == 0x7BFF);
  // bf16 and tf32 overflow only past fp32's range.
  CHECK(encode(kBf16, double(std::numeric_limits<float>::max()), {}, none) == 0x7F80);
  CHECK(encode(kBf16, double(std::numeric_limits<float>::max()), kZero, none) == 0x7F7F);
  CHECK(std::isinf(round_tf32(std::numeric_limits<float>::max())));
  // Their overflow ties: half an ulp above the largest finite goes to inf
  // (the largest finite has an odd mantissa), a float below it does not.
  CHECK(encode(kBf16, double(f32_from(0x7F7F8000u)), {}, none) == 0x7F80);
  CHECK(encode(kBf16, double(f32_from(0x7F7F7FFFu)), {}, none) == 0x7F7F);
  CHECK(encode(kTf32, double(f32_from(0x7F7FF000u)), {}, none) == 0x7F800000u >> 13);
  CHECK(encode(kTf32, double(f32_from(0x7F7FEFFFu)), {}, none) == 0x7F7FE000u >> 13);
  // e8m0: beyond 2^127 is NaN (no inf) or 2^127 saturated; negative is NaN; 0 is 2^-127.
  CHECK(encode(kE8M0, 0x1p128, {}, none) == 0xFF);
  CHECK(encode(kE8M0, 0x1p128, {}, sat) == 0xFE);
  CHECK(encode(kE8M0, -1.0) == 0xFF);
  CHECK(encode(kE8M0, 0.0) == 0x00);
  CHECK(encode(kE8M0, 0x1p-140) == 0x00);
  CHECK(encode(kE8M0, 3.0) == 129);  // the tie between 2 and 4 goes up (no mantissa, no "even")
  CHECK(encode(kE8M0, 3.0, kZero) == 128);
  // NaN in: the canonical NaN, sign clear, whatever the saturation and the
  // payload. A payload in the low bits only must not round into inf (the
  // classic bf16 bug: bits + 0x7FFF + lsb carries 0x7F800001 to 0x7F80).
  for (const Format* f : {&kFp16, &kBf16, &kTf32, &kE4M3, &kE5M2, &kE8M0}) {
    CAPTURE(f->name);
    CHECK(encode(*f, -std::nan(""), {}, sat) == magnitude_mask(*f));
    CHECK(encode(*f, std::nan(""), {}, none) == magnitude_mask(*f));
    for (uint32_t payload : {0x7F800001u, 0x7F807FFFu, 0x7FBFFFFFu, 0xFF800001u, 0x7FC00000u}) {
      CHECK(encode(*f, double(f32_from(payload)), {}, none) == magnitude_mask(*f));
      CHECK(encode(*f, double(f32_from(payload)), kZero, sat) == magnitude_mask(*f));
    }
  }
}

TEST_CASE("numeric: subnormals and underflow") {
  // e4m3 subnormals are multiples of 2^-9; half of the smallest is a tie to 0.
  CHECK(encode(kE4M3, 0x1p-10) == 0x00);
  CHECK(encode(kE4M3, -0x1p-10) == 0x80);  // zero keeps its sign
  CHECK(encode(kE4M3, std::nextafter(0x1p-10, 1.0)) == 0x01);
  CHECK(encode(kE4M3, 3 * 0x1p-10) == 0x02);   // 1.5 * 2^-9: the tie goes to the even 2
  CHECK(encode(kE4M3, 15 * 0x1p-10) == 0x08);  // 7.5 * 2^-9: up into the smallest normal
  CHECK(encode(kE4M3, 1e-300) == 0x00);
  CHECK(encode(kE4M3, -1e-300) == 0x80);
  CHECK(encode(kE5M2, 0x1p-16) == 0x01);
  CHECK(encode(kE5M2, 0x1p-17) == 0x00);
  CHECK(encode(kE2M1, 0.25) == 0x0);  // tie between 0 and 0.5
  CHECK(encode(kE2M1, 0.26) == 0x1);
  CHECK(encode(kE2M1, 0.75) == 0x2);  // tie between 0.5 (odd) and 1: 1
  CHECK(encode(kFp16, 0x1p-24) == 0x0001);
  CHECK(encode(kFp16, 0x1p-25) == 0x0000);
  CHECK(encode(kFp16, 0x1.8p-24) == 0x0002);
  CHECK(encode(kBf16, 0x1p-133) == 0x0001);
  // A double below float's range: still exact, rounded once.
  CHECK(encode(kFp32, 0x1p-149) == 0x00000001);
  CHECK(encode(kFp32, 0x1p-150) == 0x00000000);
  CHECK(encode(kFp32, std::nextafter(0x1p-150, 1.0)) == 0x00000001);
}

TEST_CASE("numeric: fp32 from double matches C++'s cast (round to nearest even) on a large sample") {
  warpnet::Rng rng(7);
  MESSAGE("seed 7");
  int bad = 0;
  for (int i = 0; i < 1 << 21; ++i) {
    // Doubles whose exponents span float's range and beyond, subnormals included.
    const double x = std::ldexp(rng.uniform(1, 2), int(rng.below(300)) - 160) * (rng.below(2) ? 1 : -1);
    const uint32_t expected = f32_bits(float(x));
    const uint32_t got = encode(kFp32, x);
    if (got != expected && ++bad <= 5) MESSAGE(x, ": ", hex(got), " != ", hex(expected));
  }
  CHECK(bad == 0);
}

TEST_CASE("numeric: fp16 from fp32 matches the compiler's _Float16 conversion on a large sample") {
  warpnet::Rng rng(11);
  MESSAGE("seed 11");
  int bad = 0;
  for (int i = 0; i < 1 << 22; ++i) {
    const float x = f32_from(uint32_t(rng.next_u64()));
    if (std::isnan(x)) continue;
    const uint32_t expected = std::bit_cast<uint16_t>(_Float16(x));
    const uint32_t got = encode(kFp16, x);
    if (got != expected && ++bad <= 5) MESSAGE(x, ": ", hex(got), " != ", hex(expected));
  }
  CHECK(bad == 0);
}

TEST_CASE("numeric: bf16 and tf32 from fp32 match integer rounding of the fp32 bits (all three modes)") {
  warpnet::Rng rng(13);
  MESSAGE("seed 13");
  int bad = 0;
  auto check = [&](uint32_t got, uint32_t expected, uint32_t u, const char* what) {
    if (got != expected && ++bad <= 5) MESSAGE(what, " of ", hex(u), ": ", hex(got), " != ", hex(expected));
  };
  for (int i = 0; i < 1 << 22; ++i) {
    const uint32_t u = uint32_t(rng.next_u64());
    const float x = f32_from(u);
    if (std::isnan(x)) continue;
    check(encode(kBf16, x) << 16, round_bits_even(u, 16), u, "bf16 nearest even");
    check(encode(kBf16, x, kAway) << 16, round_bits_away(u, 16), u, "bf16 ties away");
    check(encode(kBf16, x, kZero) << 16, round_bits_zero(u, 16), u, "bf16 toward zero");
    check(f32_bits(round_tf32(x)), round_bits_even(u, 13), u, "tf32 nearest even");
    check(f32_bits(round_tf32(x, kAway)), round_bits_away(u, 13), u, "tf32 ties away");
    check(f32_bits(round_tf32(x, kZero)), round_bits_zero(u, 13), u, "tf32 toward zero");
  }
  CHECK(bad == 0);
  // A worked tie: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
  CHECK(round_tf32(1 + 0x1p-11f) == 1);
  CHECK(round_tf32(1 + 0x1p-11f, kAway) == 1 + 0x1p-10f);
  CHECK(round_tf32(1 + 3 * 0x1p-11f) == 1 + 0x1p-9f);  // odd 1 + 2^-10 -> even 1 + 2^-9
}
