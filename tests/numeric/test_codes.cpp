// Every code of every narrow format: decode -> encode gives the code back
// (NaNs give the canonical NaN: all ones, sign clear), values grow with the
// magnitude code, and decoding agrees with references that do not go through
// numeric/ (fp32 and bf16 bit layouts, the compiler's _Float16, the OCP
// tables for e4m3, e2m1 and e8m0). Also: the README's table is this code's.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "numeric/table.hpp"
#include "tests/numeric/numeric_support.hpp"

using namespace warpnet::numeric;
using namespace warpnet::numeric::test;

namespace {

// decode -> encode for every code; returns the number of mismatches (the
// first few printed).
int round_trip_mismatches(const Format& f, Saturation saturation) {
  int bad = 0;
  for (uint32_t c = 0; c < code_count(f); ++c) {
    const float v = decode(f, c);
    uint32_t expected = c;
    if (is_nan_code(f, c)) expected = canonical_nan(f);
    if (std::isinf(v) && saturation == Saturation::finite) expected = (c & sign_bit(f)) | max_code(f);
    const uint32_t got = encode(f, v, {}, saturation);
    if (got != expected && ++bad <= 5)
      MESSAGE(f.name, ": code ", hex(c), " decodes to ", v, ", encodes to ", hex(got), ", expected ", hex(expected));
  }
  return bad;
}

}  // namespace

TEST_CASE("numeric: every fp16, bf16, e4m3, e5m2, e2m1 and e8m0 code round-trips decode -> encode") {
  for (const Format* f : {&kFp16, &kBf16, &kE4M3, &kE5M2, &kE2M1, &kE8M0}) {
    CAPTURE(f->name);
    CHECK(round_trip_mismatches(*f, Saturation::none) == 0);
    CHECK(round_trip_mismatches(*f, Saturation::finite) == 0);  // the same, except inf -> max
  }
}

TEST_CASE("numeric: finite values grow strictly with the magnitude code; the sign bit only negates") {
  for (const Format* f : kAllFormats) {
    if (bits(*f) > 16) continue;  // fp32/tf32: their layout is checked bit for bit below
    CAPTURE(f->name);
    const std::vector<double> v = finite_values(*f);
    int not_increasing = 0;
    for (size_t i = 1; i < v.size(); ++i) not_increasing += !(v[i] > v[i - 1]);
    CHECK(not_increasing == 0);
    CHECK(v.back() == max_finite(*f));
    CHECK(v[f->subnormals ? 1 : 0] == (f->subnormals ? min_subnormal(*f) : min_normal(*f)));
    if (f->is_signed)
      for (uint32_t c = 0; c <= max_code(*f); ++c) REQUIRE(decode(*f, c | sign_bit(*f)) == -v[c]);
  }
}

TEST_CASE("numeric: fp32 and bf16 codes decode to the fp32 with the same bits; tf32 to the top 19 of them") {
  warpnet::Rng rng(20240906);
  MESSAGE("seed 20240906");
  for (int i = 0; i < 1 << 20; ++i) {
    const uint32_t u = uint32_t(rng.next_u64());
    const float x = f32_from(u);
    if (std::isnan(x)) {
      REQUIRE(std::isnan(decode(kFp32, u)));
      continue;
    }
    REQUIRE(f32_bits(decode(kFp32, u)) == u);
    REQUIRE(f32_bits(decode(kTf32, u >> 13)) == u >> 13 << 13);
  }
  for (uint32_t c = 0; c < 1u << 16; ++c) {
    if (is_nan_code(kBf16, c)) continue;
    REQUIRE(f32_bits(decode(kBf16, c)) == c << 16);
  }
}

TEST_CASE("numeric: fp16 codes decode as the compiler's _Float16 does") {
  for (uint32_t c = 0; c < 1u << 16; ++c) {
    const float expected = float(std::bit_cast<_Float16>(uint16_t(c)));
    const float got = decode(kFp16, c);
    if (std::isnan(expected)) {
      REQUIRE(std::isnan(got));
      continue;
    }
    REQUIRE(f32_bits(got) == f32_bits(expected));
  }
}

TEST_CASE("numeric: e4m3, e5m2, e2m1 and e8m0 codes against the OCP tables") {
  // OFP8 rev 1.0: e4m3 bias 7, max S.1111.110 = 448, min normal 2^-6, subnormals m/8 * 2^-6.
  CHECK(decode(kE4M3, 0x7E) == 448);
  CHECK(decode(kE4M3, 0xFE) == -448);
  CHECK(decode(kE4M3, 0x78) == 256);  // S.1111.000 is a number in e4m3
  CHECK(std::isnan(decode(kE4M3, 0x7F)));
  CHECK(std::isnan(decode(kE4M3, 0xFF)));
  CHECK(decode(kE4M3, 0x08) == 0x1p-6f);
  CHECK(decode(kE4M3, 0x07) == 0.875f * 0x1p-6f);
  CHECK(decode(kE4M3, 0x01) == 0x1p-9f);
  CHECK(decode(kE4M3, 0x38) == 1);
  // e5m2: bias 15, inf S.11111.00, NaN S.11111.{01,10,11}, max 1.75 * 2^15.
  CHECK(decode(kE5M2, 0x7B) == 57344);
  CHECK(std::isinf(decode(kE5M2, 0x7C)));
  CHECK(decode(kE5M2, 0xFC) == -INFINITY);
  for (uint32_t c : {0x7Du, 0x7Eu, 0x7Fu, 0xFDu, 0xFEu, 0xFFu}) CHECK(std::isnan(decode(kE5M2, c)));
  CHECK(decode(kE5M2, 0x04) == 0x1p-14f);
  CHECK(decode(kE5M2, 0x01) == 0x1p-16f);
  CHECK(decode(kE5M2, 0x3C) == 1);
  // MX v1.0 Table 5 (e2m1): 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives.
  const float e2m1[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (uint32_t c = 0; c < 8; ++c) {
    CHECK(decode(kE2M1, c) == e2m1[c]);
    CHECK(decode(kE2M1, c | 8) == -e2m1[c]);
  }
  // MX v1.0 Table 7 (e8m0): 2^(code - 127), 0xFF NaN, no sign, no zero.
  for (uint32_t c = 0; c < 255; ++c) REQUIRE(decode(kE8M0, c) == std::ldexp(1.0f, int(c) - 127));
  CHECK(std::isnan(decode(kE8M0, 0xFF)));
}

TEST_CASE("numeric: decode refuses a code wider than its format") {
  CHECK_THROWS_WITH_AS(decode(kE2M1, 0x10), "numeric::decode: 16 is not a 4-bit e2m1 code", warpnet::Error);
}

TEST_CASE("numeric: the format facts (README table) are computed, and README.md holds them") {
  CHECK(max_finite(kBf16) == 0x1.FEp127);
  CHECK(max_finite(kTf32) == 0x1.FFCp127);
  CHECK(max_finite(kFp32) == double(std::numeric_limits<float>::max()));
  CHECK(min_subnormal(kFp32) == double(std::numeric_limits<float>::denorm_min()));
  CHECK(min_normal(kFp16) == 0x1p-14);
  CHECK(epsilon(kFp32) == double(std::numeric_limits<float>::epsilon()));
  CHECK(emax(kE4M3) == 8);
  CHECK(emax(kE5M2) == 15);
  CHECK(emax(kE2M1) == 2);

  const std::string table = markdown_table();
  const std::string begin = "<!-- formats table: generated by tests/numeric (WARPNET_UPDATE_README=1) -->\n";
  const std::string end = "<!-- end of formats table -->";
  // This file's path as the compiler saw it: tests/numeric/ beside src/numeric/.
  const auto readme = std::filesystem::path(__FILE__).parent_path() / "../../src/numeric/README.md";
  if (!std::filesystem::exists(readme)) {
    MESSAGE("skipped: ", readme.string(), " not found (sources moved since the build); the table:\n", table);
    return;
  }
  std::stringstream text;
  text << std::ifstream(readme).rdbuf();
  std::string s = text.str();
  const size_t b = s.find(begin), e = s.find(end);
  REQUIRE_MESSAGE((b != std::string::npos && e != std::string::npos && b < e), readme.string(),
                  " lacks the table's markers");
  const std::string current = s.substr(b + begin.size(), e - b - begin.size());
  const char* update = std::getenv("WARPNET_UPDATE_README");
  if (current != table && update && std::string(update) == "1") {
    s.replace(b + begin.size(), e - b - begin.size(), table);
    std::ofstream(readme) << s;
    MESSAGE("rewrote the table in ", readme.string());
    return;
  }
  CHECK_MESSAGE(current == table, readme.string(),
                "'s table is out of date; rerun with WARPNET_UPDATE_README=1, or paste:\n", table);
}
