// Per-tensor scaling and OCP MX block scaling on examples worked by hand
// (the arithmetic is in the comments), then their general properties.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "numeric/scaling.hpp"
#include "tests/numeric/numeric_support.hpp"
#include "tests/test_support.hpp"

using namespace warpnet::numeric;
using namespace warpnet::numeric::test;

TEST_CASE("numeric: per-tensor scaling puts amax on the format's max") {
  const std::vector<float> x{0.5f, -3, 100, 1e-3f, std::numeric_limits<float>::infinity()};
  CHECK(amax(x) == 100);  // inf is left out of amax
  const PerTensor t = encode_per_tensor(kE4M3, x);
  CHECK(t.scale == 4.48f);    // 448 / 100
  CHECK(t.codes[2] == 0x7E);  // 100 * 4.48 = 448: the max
  // -3 * 4.48 = -13.44: spacing 1 in [8, 16) -> -13 = -1.625 * 2^3: sign, field 10, mantissa 101.
  CHECK(t.codes[1] == 0xD5);
  // 1e-3 * 4.48 = 0.00448: subnormal, 2.29 steps of 2^-9 -> 2.
  CHECK(t.codes[3] == 0x02);
  CHECK(t.codes[4] == 0x7E);  // inf saturates
  const std::vector<float> back = decode(t);
  CHECK(back[2] == doctest::Approx(100).epsilon(1e-6));
  CHECK(back[1] == -13 / 4.48f);
  for (size_t i = 0; i < 3; ++i) CHECK(std::fabs(back[i] - x[i]) <= std::fabs(x[i]) * 0x1p-4);  // half an e4m3 step

  CHECK(per_tensor_scale(kE4M3, 0) == 1);
  CHECK(per_tensor_scale(kE5M2, 57344) == 1);
  CHECK(per_tensor_scale(kE4M3, 1e-45f) == std::numeric_limits<float>::max());  // 448 / 1e-45 overflows float
  CHECK(warpnet::test::error_of([&] { encode_per_tensor(kE4M3, x, Round::stochastic); }) ==
        "numeric::encode_per_tensor: stochastic rounding needs an Rng");
  CHECK(warpnet::test::error_of([&] { encode_per_tensor(kFp16, x); }) ==
        "numeric::encode_per_tensor: codes are bytes, and fp16 has 16 bits");
}

TEST_CASE("numeric: MX shared exponent = floor(log2 amax) - emax_elem, clamped to e8m0's range (OCP MX 6.3)") {
  CHECK(mx_shared_exponent(kE2M1, 6) == 0);  // floor(log2 6) = 2, emax 2
  CHECK(mx_shared_exponent(kE2M1, 7.99f) == 0);
  CHECK(mx_shared_exponent(kE2M1, 8) == 1);
  CHECK(mx_shared_exponent(kE4M3, 1000) == 1);    // 9 - 8
  CHECK(mx_shared_exponent(kE5M2, 0.1f) == -19);  // -4 - 15
  CHECK(mx_shared_exponent(kE4M3, 0) == -127);
  CHECK(mx_shared_exponent(kE4M3, 1e-40f) == -127);  // -133 - 8, clamped
  CHECK(mx_shared_exponent(kE2M1, std::numeric_limits<float>::max()) == 125);
}

TEST_CASE("numeric: MX e2m1 blocks, worked by hand") {
  // Block 0: amax 6 -> X = 2^0 (code 127). 6 -> 0x7, 3 -> 0x5, 1 -> 0x2, -0.5 -> 0x9,
  // 0.25 (a tie between 0 and 0.5) -> 0, 5 (a tie between 4 and 6) -> 4 = 0x6.
  // Block 1: amax 7 -> floor(log2 7) = 2 -> X = 1 again, and 7 clamps to 6 (the
  // rule keeps the top binade [4, 8), which e2m1 fills only up to 6).
  // Block 2 (8 elements, a short last block): amax 0.75 -> floor(log2) = -1 -> X = 2^-3
  // (code 124); 0.75 / X = 6 -> 0x7, 0.1 / X = 0.8 -> 1 = 0x2, -0.2 / X = -1.6 -> -1.5 = 0xB.
  std::vector<float> x(72, 0.0f);
  const float block0[6] = {6, 3, 1, -0.5f, 0.25f, 5};
  std::copy(block0, block0 + 6, x.begin());
  x[32] = 7;
  x[33] = -1;
  x[64] = 0.75f;
  x[65] = 0.1f;
  x[66] = -0.2f;
  const MxTensor t = encode_mx(kE2M1, x, 72);
  REQUIRE(t.blocks_per_row() == 3);
  CHECK(t.scales == std::vector<uint8_t>{127, 127, 124});
  const uint8_t codes0[6] = {0x7, 0x5, 0x2, 0x9, 0x0, 0x6};
  for (int i = 0; i < 6; ++i) CHECK(t.codes[size_t(i)] == codes0[i]);
  CHECK(t.codes[32] == 0x7);
  CHECK(t.codes[33] == 0xA);
  CHECK(t.codes[64] == 0x7);
  CHECK(t.codes[65] == 0x2);
  CHECK(t.codes[66] == 0xB);
  const std::vector<float> back = decode(t);
  CHECK(back[32] == 6);
  CHECK(back[5] == 4);
  CHECK(back[65] == 0.125f);
  CHECK(back[66] == -0.1875f);
}

TEST_CASE("numeric: MX e4m3 and e5m2 blocks, worked by hand; zero, NaN and tiny blocks") {
  // e4m3, 2 rows of 32: row 0 amax 1000 -> X = 2^1 (code 128); 1000 / 2 = 500 clamps to 448
  // (0x7E, back 896); 0.01 / 2 = 0.005 = 2.56 * 2^-9 -> 3 * 2^-9 (0x03, back 0.01171875).
  // Row 1 is all zero: X = 2^-127 (code 0), every code 0.
  std::vector<float> x(64, 0.0f);
  x[0] = 1000;
  x[1] = 0.01f;
  MxTensor t = encode_mx(kE4M3, x, 32);
  CHECK(t.rows == 2);
  CHECK(t.scales == std::vector<uint8_t>{128, 0});
  CHECK(t.codes[0] == 0x7E);
  CHECK(t.codes[1] == 0x03);
  std::vector<float> back = decode(t);
  CHECK(back[0] == 896);
  CHECK(back[1] == 0.01171875f);
  for (int i = 32; i < 64; ++i) CHECK(back[size_t(i)] == 0);

  // e5m2: amax 0.1 -> floor(log2 0.1) = -4 -> X = 2^-19 (code 108); 0.1 * 2^19 = 52428.8,
  // spacing 8192 in [32768, 65536) -> 6 * 8192 = 49152 = 1.5 * 2^15: field 30, mantissa 10 -> 0x7A.
  t = encode_mx(kE5M2, std::vector<float>{0.1f, -0.1f}, 2);
  CHECK(t.scales == std::vector<uint8_t>{108});
  CHECK(t.codes == std::vector<uint8_t>{0x7A, 0xFA});
  CHECK(decode(t)[0] == 0.09375f);

  // A NaN or inf makes its block's scale NaN; the other blocks do not notice.
  x.assign(64, 1.0f);
  x[40] = std::numeric_limits<float>::quiet_NaN();
  t = encode_mx(kE4M3, x, 64);
  CHECK(t.scales == std::vector<uint8_t>{127 - 8, 0xFF});  // amax 1: X = 2^-8
  back = decode(t);
  CHECK(back[0] == 1);
  CHECK(std::isnan(back[33]));
  x[40] = -std::numeric_limits<float>::infinity();
  CHECK(encode_mx(kE4M3, x, 64).scales[1] == 0xFF);

  // An fp32 subnormal amax: the scale stops at 2^-127, and the block keeps what it can.
  t = encode_mx(kE4M3, std::vector<float>{1e-40f, 3e-41f}, 2);
  CHECK(t.scales == std::vector<uint8_t>{0});
  CHECK(decode(t)[0] == doctest::Approx(1e-40).scale(0).epsilon(0.07));  // e4m3's half step, 2^-4
}

TEST_CASE("numeric: MX round trips stay within half a step of the element format, relative to the block") {
  // |decoded - x| <= X * (half the element spacing at |x| / X), and never more than
  // the clamping of the top binade costs: check the common case, elements in
  // the normal range of the element format and below its max.
  warpnet::Rng rng(3);
  MESSAGE("seed 3");
  std::vector<float> x(8 * 96);
  for (float& v : x) v = float(rng.normal() * std::exp2(rng.uniform(-20, 20)));
  for (const Format* f : {&kE4M3, &kE5M2, &kE2M1}) {
    CAPTURE(f->name);
    const MxTensor t = encode_mx(*f, x, 96);
    const std::vector<float> back = decode(t);
    int bad = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double X = decode(kE8M0, t.scales[i / 96 * 3 + i % 96 / 32]);
      const double v = std::fabs(x[i]) / X;
      if (v < min_normal(*f) || v > max_finite(*f)) continue;
      bad += std::fabs(back[i] - x[i]) > X * v * epsilon(*f) / 2;
    }
    CHECK(bad == 0);
    // Stochastic rounding: each value is one of the two neighbours of x / X.
    warpnet::Rng draws(9);
    const MxTensor s = encode_mx(*f, x, 96, Round::stochastic, &draws);
    CHECK(s.scales == t.scales);
    int strangers = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double X = decode(kE8M0, s.scales[i / 96 * 3 + i % 96 / 32]);
      const double scaled = double(x[i]) / X;
      const double lo = quantize(*f, scaled, {Round::toward_zero}, Saturation::finite);
      const double hi = quantize(*f, scaled, {Round::stochastic, 0xFFFFFFFF}, Saturation::finite);
      const double got = decode(*f, s.codes[i]);
      strangers += got != lo && got != hi;
    }
    CHECK(strangers == 0);
  }
}
