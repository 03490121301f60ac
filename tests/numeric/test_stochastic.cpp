// Stochastic rounding: every result is one of the two neighbours of x, values
// of the format never move, and the mean is x.
//
// The bound. For lo < |x| < hi, consecutive values of the format, encode()
// rounds away from zero iff d + r >= 2^32, r the caller's random word and
// d = floor(p * 2^32), p = (|x| - lo) / (hi - lo). So P(up) = d / 2^32, which
// lies in (p - 2^-32, p]. Over N independent words the count U of ups is
// Binomial(N, P(up)), and the mean result is lo + (hi - lo) * U / N; U / N is
// within 5 standard deviations, 5 * sqrt(p (1 - p) / N), of P(up) except with
// probability 5.7e-7 (normal tail). Hence
//   |mean - |x|| <= (hi - lo) * (5 * sqrt(p (1 - p) / N) + 2^-32).
// The seed is fixed and printed, so a pass is reproducible, not lucky.
// With the N = 2^16 words r_k = k * 2^16 instead of random ones (stratified),
// U / N is within 2^-16 of P(up) with certainty: a deterministic check.
#include <doctest/doctest.h>

#include <cmath>

#include "tests/numeric/numeric_support.hpp"

using namespace warpnet::numeric;
using namespace warpnet::numeric::test;

namespace {

struct Neighbours {
  uint32_t lo_code;  // magnitude codes; hi is lo_code + 1
  double lo, hi, p;  // p = (|x| - lo) / (hi - lo)
};

Neighbours neighbours(const Format& f, double x) {
  const uint32_t c = encode(f, std::fabs(x), {Round::toward_zero}) & magnitude_mask(f);
  const double lo = decode(f, c), hi = decode(f, c + 1);
  return {c, lo, hi, (std::fabs(x) - lo) / (hi - lo)};
}

// Values to round: random magnitudes spread over the format's normal and
// subnormal range, below its max, both signs.
std::vector<double> samples(const Format& f, warpnet::Rng& rng, int count) {
  std::vector<double> xs;
  const double top = std::log2(max_finite(f)), bottom = std::log2(min_subnormal(f));
  while (int(xs.size()) < count) {
    const double x = std::exp2(rng.uniform(bottom, top)) * (rng.below(2) ? -1 : 1);
    if (quantize(f, x) != float(x)) xs.push_back(x);  // skip the (rare) values of the format itself
  }
  return xs;
}

}  // namespace

TEST_CASE("numeric: stochastic rounding gives a neighbour, and its mean is x (random and stratified words)") {
  warpnet::Rng rng(42);
  MESSAGE("seed 42");
  constexpr int N = 1 << 16;
  for (const Format* f : {&kE4M3, &kE5M2, &kE2M1, &kFp16, &kBf16}) {
    CAPTURE(f->name);
    for (double x : samples(*f, rng, 24)) {
      CAPTURE(x);
      const Neighbours nb = neighbours(*f, x);
      const uint32_t sign = std::signbit(x) ? sign_bit(*f) : 0;
      int ups_random = 0, ups_stratified = 0, strangers = 0;
      for (int k = 0; k < N; ++k) {
        const uint32_t a = encode(*f, x, stochastic(uint32_t(rng.next_u64() >> 32)));
        const uint32_t b = encode(*f, x, stochastic(uint32_t(k) << 16));
        ups_random += a == (sign | (nb.lo_code + 1));
        ups_stratified += b == (sign | (nb.lo_code + 1));
        strangers += (a != (sign | nb.lo_code) && a != (sign | (nb.lo_code + 1))) +
                     (b != (sign | nb.lo_code) && b != (sign | (nb.lo_code + 1)));
      }
      CHECK(strangers == 0);
      const double mean_random = nb.lo + (nb.hi - nb.lo) * ups_random / N;
      const double mean_stratified = nb.lo + (nb.hi - nb.lo) * ups_stratified / N;
      const double sigma = std::sqrt(nb.p * (1 - nb.p) / N);
      CHECK(std::fabs(mean_random - std::fabs(x)) <= (nb.hi - nb.lo) * (5 * sigma + 0x1p-32));
      CHECK(std::fabs(mean_stratified - std::fabs(x)) <= (nb.hi - nb.lo) * (0x1p-16 + 0x1p-32));
    }
  }
}

TEST_CASE("numeric: stochastic rounding leaves the format's own values alone, and its extreme words") {
  for (const Format* f : {&kE4M3, &kE5M2, &kE2M1, &kFp16, &kBf16}) {
    CAPTURE(f->name);
    for (uint32_t c = 0; c <= max_code(*f); ++c)
      for (uint32_t r : {0u, 1u, 0x80000000u, 0xFFFFFFFFu}) REQUIRE(encode(*f, decode(*f, c), stochastic(r)) == c);
  }
  // e4m3 between 1 and 1.125: p = 0.25 -> up iff r >= 0.75 * 2^32.
  CHECK(encode(kE4M3, 1.03125, stochastic(0xBFFFFFFF)) == 0x38);
  CHECK(encode(kE4M3, 1.03125, stochastic(0xC0000000)) == 0x39);
  // Word 0 never rounds up; the largest word rounds up anything with d >= 1.
  CHECK(encode(kE4M3, std::nextafter(1.125, 0.0), stochastic(0)) == 0x38);
  CHECK(encode(kE4M3, 1 + 0x1p-30, stochastic(0xFFFFFFFF)) == 0x39);
  // Past the max by a rounding up: overflow rules as for nearest.
  CHECK(encode(kE4M3, 460, stochastic(0xFFFFFFFF), Saturation::none) == 0x7F);
  CHECK(encode(kE4M3, 460, stochastic(0xFFFFFFFF), Saturation::finite) == 0x7E);
  CHECK(encode(kE4M3, 460, stochastic(0), Saturation::none) == 0x7E);
  CHECK(encode(kE5M2, -60000, stochastic(0xFFFFFFFF), Saturation::none) == 0xFC);
}

TEST_CASE("numeric: summed over many values, stochastic rounding errors cancel; nearest's need not") {
  // x uniform in [1, 1 + 2^-4): one e4m3 step (1 -> 1.125) holds them all, and
  // nearest rounds the lower half down, the upper half up: its errors cancel
  // too. In [1, 1.03125) nearest always rounds down (bias -p per value),
  // while stochastic's normalized sum  sum(B_i - P_i) / sqrt(sum P_i (1 - P_i))
  // stays within 5 (see the bound above).
  warpnet::Rng rng(5);
  MESSAGE("seed 5");
  double stochastic_sum = 0, nearest_sum = 0, variance = 0;
  for (int i = 0; i < 1 << 18; ++i) {
    const double x = rng.uniform(1, 1.03125), p = (x - 1) / 0.125;
    stochastic_sum += (quantize(kE4M3, x, stochastic(uint32_t(rng.next_u64() >> 32))) - x) / 0.125;
    nearest_sum += (quantize(kE4M3, x) - x) / 0.125;
    variance += p * (1 - p);
  }
  CHECK(std::fabs(stochastic_sum) <= 5 * std::sqrt(variance) + (1 << 18) * 0x1p-32);
  CHECK(nearest_sum < -0.1 * (1 << 18));  // mean error about -p = -0.125 steps
}
