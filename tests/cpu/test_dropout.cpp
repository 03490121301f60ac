// dropout: the mask's values and keep rate, reproducibility from the seed
// (and the Rng state), the counter-based mask (element i depends on seed and
// i alone), the backward against central differences, and the p checks.
#include <doctest/doctest.h>

#include <cmath>

#include "cpu/ops.hpp"
#include "kernels/common/counter_hash.hpp"
#include "op_test_util.hpp"

using namespace warpnet;
using namespace warpnet::test;

TEST_CASE("dropout keeps about 1 − p of the values, scaled by 1/(1 − p)") {
  const uint64_t seed = 6001;
  CAPTURE(seed);
  Rng data_rng(seed);
  for (DType dtype : {DType::f32, DType::f64}) {
    for (double p : {0.1, 0.5, 0.9}) {
      CAPTURE(p);
      const Tensor x = uniform_tensor({7, 1433}, dtype, data_rng);
      Rng rng(seed + 1);
      const cpu::DropoutResult out = cpu::dropout(x, p, rng);
      int64_t kept = 0, bad_mask = 0, bad_y = 0;
      for (int64_t i = 0; i < x.numel(); ++i) {
        const double m = out.mask.item(i);
        const bool keep = m != 0.0;
        kept += keep;
        // The scale is 1/(1−p) rounded to dtype; compare in that dtype.
        bad_mask += keep && std::abs(m - 1.0 / (1.0 - p)) > unit_roundoff(dtype) * 2 * m;
        bad_y += out.y.item(i) != (dtype == DType::f32 ? double(float(x.item(i)) * float(m)) : x.item(i) * m);
      }
      CHECK(bad_mask == 0);
      CHECK(bad_y == 0);
      // Kept count is Binomial(n, 1 − p): within 5 standard deviations.
      const double n = double(x.numel()), sd = std::sqrt(n * p * (1 - p));
      CHECK(std::abs(double(kept) - n * (1 - p)) < 5 * sd);
    }
  }
}

TEST_CASE("the mask's bits are splitmix64's published stream, so no shared bug can hide in them") {
  // The kernel and this reference share counter_hash, so comparing them
  // cannot catch a fault in it: here it meets splitmix64's outputs for seed
  // 1234567 as published (Rosetta Code, "Pseudo-random numbers/Splitmix64":
  // 0x599ED017FB08FC85, 0x2C73F08458540FA5, 0x883EBCE5A3F27C77,
  // 0x3FBEF740E9177B3F, 0xE3B8346708CB5ECD), high 32 bits of each.
  const uint32_t published_high[] = {0x599ED017u, 0x2C73F084u, 0x883EBCE5u, 0x3FBEF740u, 0xE3B83467u};
  for (uint64_t i = 0; i < 5; ++i) CHECK(counter_hash(1234567, i) == published_high[i]);
  // At p = 0.5 (threshold 2^31) element i is kept iff its top bit is set.
  const Tensor x = Tensor::full({5}, 1.0f);
  const cpu::DropoutResult out = cpu::dropout(x, 0.5, uint64_t{1234567});
  const float kept[] = {0, 0, 2, 0, 2};
  for (int64_t i = 0; i < 5; ++i) CHECK(out.mask.item(i) == kept[i]);
}

TEST_CASE("dropout reproduces its mask from the Rng state; p = 0 keeps everything") {
  const uint64_t seed = 6002;
  CAPTURE(seed);
  Rng data_rng(seed);
  const Tensor x = uniform_tensor({3, 33}, DType::f32, data_rng);
  Rng a(seed), b(seed);
  check_equal(cpu::dropout(x, 0.3, a).mask, cpu::dropout(x, 0.3, b).mask, "same seed, same mask");
  // The Rng overload draws one 64-bit seed per call.
  Rng c(seed), d(seed);
  check_equal(cpu::dropout(x, 0.3, c).mask, cpu::dropout(x, 0.3, d.next_u64()).mask, "one seed per call");
  Rng e(seed);
  const cpu::DropoutResult none = cpu::dropout(x, 0.0, e);
  check_equal(none.mask, Tensor::full(x.shape(), 1.0), "p = 0 mask");
  check_equal(none.y, x, "p = 0 output");
  CHECK(e.next_u64() == Rng(seed).next_u64());  // p = 0 drew nothing
}

TEST_CASE("dropout's mask is counter-based: element i depends on (seed, i) only") {
  const uint64_t seed = 6004;
  CAPTURE(seed);
  Rng data_rng(seed);
  const Tensor big = uniform_tensor({4099}, DType::f32, data_rng);
  const double p = 0.5;
  const Tensor mask = cpu::dropout(big, p, seed).mask;
  // A prefix of the tensor gets the prefix of the mask (the decisions do not
  // depend on n), and a 2-D view of the same elements the same mask.
  const Tensor small = uniform_tensor({33}, DType::f32, data_rng);
  const Tensor small_mask = cpu::dropout(small, p, seed).mask;
  int64_t prefix_diffs = 0;
  for (int64_t i = 0; i < 33; ++i) prefix_diffs += small_mask.item(i) != mask.item(i);
  CHECK(prefix_diffs == 0);
  check_equal(cpu::dropout(big.reshape({1, 4099}), p, seed).mask.reshape({4099}), mask, "same elements, 2-D");
  // Different seeds: about half the decisions differ (each element agrees
  // with probability p² + (1−p)² = 1/2 at p = 0.5): within 5 sd of n/2.
  for (uint64_t other : {seed + 1, seed ^ (uint64_t(1) << 63), uint64_t(0)}) {
    CAPTURE(other);
    const Tensor m2 = cpu::dropout(big, p, other).mask;
    int64_t differ = 0;
    for (int64_t i = 0; i < big.numel(); ++i) differ += m2.item(i) != mask.item(i);
    const double n = double(big.numel());
    CHECK(std::abs(double(differ) - n / 2) < 5 * std::sqrt(n / 4));
  }
  // Neighbouring elements are not correlated: among kept elements the next
  // one is kept about 1 − p of the time (Binomial, within 5 sd).
  int64_t kept = 0, kept_then_kept = 0;
  for (int64_t i = 0; i + 1 < big.numel(); ++i) {
    if (mask.item(i) == 0.0) continue;
    ++kept;
    kept_then_kept += mask.item(i + 1) != 0.0;
  }
  CHECK(std::abs(double(kept_then_kept) - kept * (1 - p)) < 5 * std::sqrt(kept * p * (1 - p)));
}

TEST_CASE("dropout's mask does not depend on the thread count") {
  const uint64_t seed = 6005;
  CAPTURE(seed);
  Rng data_rng(seed);
  // Past kParallelMinElements, so the loop runs on the whole team.
  const Tensor x = uniform_tensor({3, 40000}, DType::f32, data_rng);
  cpu::DropoutResult one, four;
  {
    ThreadCountScope threads(1);
    one = cpu::dropout(x, 0.25, seed);
  }
  {
    ThreadCountScope threads(4);
    four = cpu::dropout(x, 0.25, seed);
  }
  check_equal(four.mask, one.mask, "mask");
  check_equal(four.y, one.y, "y");
}

TEST_CASE("dropout_backward matches central differences with the mask fixed") {
  const uint64_t seed = 6003;
  CAPTURE(seed);
  Rng data_rng(seed);
  Tensor x = uniform_tensor({7, 5}, DType::f64, data_rng);
  const Tensor g = uniform_tensor(x.shape(), DType::f64, data_rng);
  // Reseeding before every forward draws the same mask each time.
  Rng rng(seed + 1);
  const Tensor mask = cpu::dropout(x, 0.4, rng).mask;
  check_gradient("dx", x, cpu::dropout_backward(g, mask), [&] {
    rng.reseed(seed + 1);
    return dot(cpu::dropout(x, 0.4, rng).y, g);
  });
}

TEST_CASE("dropout checks p") {
  Rng rng(1);
  const Tensor x = Tensor::zeros({4});
  CHECK_THROWS_WITH_AS(cpu::dropout(x, 1.0, rng), "dropout: p is 1, expected 0 <= p < 1", Error);
  CHECK_THROWS_WITH_AS(cpu::dropout(x, -0.5, rng), "dropout: p is -0.5, expected 0 <= p < 1", Error);
  CHECK_THROWS_WITH_AS(cpu::dropout_backward(x, Tensor::zeros({5})),
                       "dropout_backward: dy is (4) but mask is (5): shapes differ", Error);
}
