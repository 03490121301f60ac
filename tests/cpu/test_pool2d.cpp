// max_pool2d and avg_pool2d: forwards against a naive loop written here,
// backwards against central differences, and the shape errors.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <utility>

#include "cpu/ops.hpp"
#include "op_test_util.hpp"

using namespace warpnet;
using namespace warpnet::test;

namespace {

struct PoolCase {
  const char* name;
  int64_t n, c, h, w;
  cpu::Pool2dParams p;
};

// Odd extents (the last row/column may be dropped), overlapping windows,
// padding, and the degenerate 1×1 window.
const PoolCase kCases[] = {
    {"2x2 stride 2, odd extents", 3, 2, 7, 9, {2, 2, 0}},
    {"3x3 stride 2 pad 1", 1, 3, 7, 5, {3, 2, 1}},
    {"3x3 stride 1 pad 1", 2, 1, 5, 6, {3, 1, 1}},
    {"2x2 stride 1 overlapping", 1, 2, 4, 7, {2, 1, 0}},
    {"1x1 stride 1", 1, 1, 3, 3, {1, 1, 0}},
    {"3x3 stride 3 on 33x1 padded", 1, 1, 33, 1, {3, 3, 1}},
};

// Distinct values 0.01 apart in random order: no ties for max, and a
// finite-difference step of 1e-6 can never change which element wins.
Tensor distinct_tensor(const Shape& shape, Rng& rng) {
  Tensor t = Tensor::empty(shape, DType::f64);
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) t.set(i, 0.01 * double(i - n / 2));
  for (int64_t i = n - 1; i > 0; --i) {
    const int64_t j = int64_t(rng.below(uint64_t(i + 1)));
    const double v = t.item(i);
    t.set(i, t.item(j));
    t.set(j, v);
  }
  return t;
}

// Naive pooling in double: max (first winner in row-major window order, and
// its flat index in the H·W plane) and the count_include_pad average.
struct NaivePool {
  Tensor max, argmax, avg;
};
NaivePool naive_pool(const Tensor& x, const cpu::Pool2dParams& prm) {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  const cpu::Conv2dParams window{prm.stride, prm.padding, 1};
  const int64_t p = cpu::conv_out_size(h, prm.kernel, window), q = cpu::conv_out_size(w, prm.kernel, window);
  NaivePool out{Tensor::empty({n, c, p, q}, DType::f64), Tensor::empty({n, c, p, q}, DType::i32),
                Tensor::empty({n, c, p, q}, DType::f64)};
  int64_t o = 0;
  for (int64_t plane = 0; plane < n * c; ++plane)
    for (int64_t ip = 0; ip < p; ++ip)
      for (int64_t iq = 0; iq < q; ++iq, ++o) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t best_at = -1;
        for (int64_t dr = 0; dr < prm.kernel; ++dr)
          for (int64_t ds = 0; ds < prm.kernel; ++ds) {
            const int64_t hh = ip * prm.stride - prm.padding + dr, ww = iq * prm.stride - prm.padding + ds;
            if (hh < 0 || hh >= h || ww < 0 || ww >= w) continue;
            const double v = x.item(plane * h * w + hh * w + ww);
            sum += v;
            if (v > best) best = v, best_at = hh * w + ww;
          }
        out.max.set(o, best);
        out.argmax.set(o, double(best_at));
        out.avg.set(o, sum / double(prm.kernel * prm.kernel));
      }
  return out;
}

}  // namespace

TEST_CASE("max and average pooling match a naive loop") {
  const uint64_t seed = 4001;
  CAPTURE(seed);
  Rng rng(seed);
  for (DType dtype : {DType::f32, DType::f64}) {
    for (const PoolCase& pc : kCases) {
      INFO("case: ", std::string(pc.name));
      const Tensor x = uniform_tensor({pc.n, pc.c, pc.h, pc.w}, dtype, rng);
      const NaivePool want = naive_pool(x, pc.p);
      const std::string what = cat(pc.name, " ", name_of(dtype));
      const cpu::MaxPoolResult mp = cpu::max_pool2d(x, pc.p);
      // Max selects an input value: exact. The argmax is exact too (random
      // values in [-1,1) do not tie).
      check_equal(mp.y, want.max, "max_pool2d " + what);
      check_equal(mp.argmax, want.argmax, "max_pool2d argmax " + what);
      // At most kernel² additions and one scaling: (k² + 1)·u relative to the
      // sum of magnitudes, which is at most k² here (|x| < 1).
      const double u = unit_roundoff(dtype), k2 = double(pc.p.kernel * pc.p.kernel);
      check_close(cpu::avg_pool2d(x, pc.p), want.avg, (k2 + 1) * u * k2, 0.0, "avg_pool2d " + what);
    }
  }
}

// The device kernels' max_pool2d(_backward) are checked, with zero
// tolerance, on tied small integers against this reference: its rule for a
// tie (the first value in row-major order wins, as PyTorch's CPU pooling)
// must hold here too.
TEST_CASE("max pooling picks the first of tied values in row-major order") {
  Rng rng(4002);
  for (const PoolCase& pc : kCases) {
    INFO("case: ", std::string(pc.name));
    Tensor x = Tensor::empty({pc.n, pc.c, pc.h, pc.w}, DType::f32);
    for (int64_t i = 0; i < x.numel(); ++i) x.set(i, double(rng.below(3)));  // 0, 1, 2: most windows tie
    const NaivePool want = naive_pool(x, pc.p);
    const cpu::MaxPoolResult mp = cpu::max_pool2d(x, pc.p);
    check_equal(mp.y, want.max, cat("max_pool2d ", pc.name));
    check_equal(mp.argmax, want.argmax, cat("max_pool2d argmax ", pc.name));
  }
}

TEST_CASE("max pooling propagates NaN like PyTorch") {
  Tensor x = Tensor::from<float>({1, 1, 2, 2}, {1.0f, NAN, 3.0f, 2.0f});
  const cpu::MaxPoolResult mp = cpu::max_pool2d(x, {2, 2, 0});
  CHECK(std::isnan(mp.y.item(0)));
  CHECK(mp.argmax.item(0) == 1);
  // The last NaN of a window wins, wherever it stands, as in PyTorch
  // ("val > maxval || isnan(val)"): its gradient goes there; windows beside
  // it keep their numbers.
  Tensor y = Tensor::from<float>({1, 1, 2, 6}, {NAN, 5.0f, 1.0f, 2.0f, 4.0f, 3.0f,  //
                                                NAN, 7.0f, 3.0f, NAN, 6.0f, 8.0f});
  const cpu::MaxPoolResult three = cpu::max_pool2d(y, {2, 2, 0});
  CHECK(std::isnan(three.y.item(0)));
  CHECK(three.argmax.item(0) == 6);
  CHECK(std::isnan(three.y.item(1)));
  CHECK(three.argmax.item(1) == 9);
  CHECK(three.y.item(2) == 8.0);
  CHECK(three.argmax.item(2) == 11);
}

// PyTorch divides a window's sum by its area; a multiply by the rounded
// 1/9 is 1 ulp off for a sum of 17 (1.88888896 against 1.88888884).
TEST_CASE("average pooling divides the sum by the window's area, correctly rounded, as PyTorch") {
  const Tensor x = Tensor::from<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 2, 0, 0, 0});  // sum 17, exact
  CHECK(cpu::avg_pool2d(x, {3, 3, 0}).item(0) == double(17.0f / 9.0f));
  const Tensor dy = Tensor::from<float>({1, 1, 1, 1}, {17});
  const Tensor dx = cpu::avg_pool2d_backward(dy, x.shape(), {3, 3, 0});
  for (int64_t i = 0; i < 9; ++i) CHECK(dx.item(i) == double(17.0f / 9.0f));
}

TEST_CASE("pooling backwards match central differences") {
  const uint64_t seed = 4002;
  CAPTURE(seed);
  Rng rng(seed);
  for (const PoolCase& pc : kCases) {
    INFO("case: ", std::string(pc.name));
    Tensor x = distinct_tensor({pc.n, pc.c, pc.h, pc.w}, rng);
    const cpu::MaxPoolResult mp = cpu::max_pool2d(x, pc.p);
    const Tensor g = uniform_tensor(mp.y.shape(), DType::f64, rng);
    check_gradient(cat("max_pool2d dx, ", pc.name), x, cpu::max_pool2d_backward(g, mp.argmax, x.shape()),
                   [&] { return dot(cpu::max_pool2d(x, pc.p).y, g); });
    check_gradient(cat("avg_pool2d dx, ", pc.name), x, cpu::avg_pool2d_backward(g, x.shape(), pc.p),
                   [&] { return dot(cpu::avg_pool2d(x, pc.p), g); });
  }
}

TEST_CASE("pooling errors name the shapes and values") {
  const Tensor x = Tensor::zeros({2, 3, 8, 8});
  CHECK_THROWS_WITH_AS(cpu::max_pool2d(Tensor::zeros({3, 8, 8}), {}), "max_pool2d: x must be 4-D (N,C,H,W), got (3,8,8)",
                       Error);
  CHECK_THROWS_WITH_AS(cpu::max_pool2d(Tensor::zeros({1, 1, 1, 5}), {}),
                       "max_pool2d: output would be empty: input 1x5, kernel 2, padding 0", Error);
  CHECK_THROWS_WITH_AS(cpu::avg_pool2d(x, {3, 1, 2}), "avg_pool2d: padding 2 is more than half the kernel 3", Error);
  CHECK_THROWS_WITH_AS(cpu::avg_pool2d_backward(Tensor::zeros({2, 3, 3, 3}), x.shape(), {}),
                       "avg_pool2d_backward: dy is (2,3,3,3) but the forward output is (2,3,4,4)", Error);
  CHECK_THROWS_WITH_AS(cpu::max_pool2d_backward(Tensor::zeros({2, 3, 3, 3}), Tensor::zeros({2, 3, 4, 4}, DType::i32),
                                                x.shape()),
                       "max_pool2d_backward: dy is (2,3,3,3) but the forward output is (2,3,4,4)", Error);
  Tensor bad_argmax = Tensor::zeros({2, 3, 4, 4}, DType::i32);
  bad_argmax.set(5, 64);
  CHECK_THROWS_WITH_AS(cpu::max_pool2d_backward(Tensor::zeros({2, 3, 4, 4}), bad_argmax, x.shape()),
                       "max_pool2d_backward: argmax 64 at flat index 5 is outside the 8x8 plane", Error);
  CHECK_THROWS_WITH_AS(cpu::max_pool2d_backward(Tensor::zeros({2, 3, 4, 4}), bad_argmax, Shape{2, 4, 8, 8}),
                       "max_pool2d_backward: dy is (2,3,4,4) but x is (2,4,8,8): expected the same (N,C)", Error);
}
