// conv2d (im2col + GEMM), conv2d_direct (the seven loops) and conv2d_backward:
// both forwards against a naive loop written here, f32 against f64, every
// gradient against central differences, the backward as the forward's adjoint
// at random geometries, and the shape errors.
#include <doctest/doctest.h>

#include <cmath>

#include "core/memory.hpp"
#include "cpu/ops.hpp"
#include "op_test_util.hpp"

using namespace warpnet;
using namespace warpnet::test;

namespace {

struct ConvCase {
  const char* name;
  int64_t n, c, h, w, k, r, s;
  cpu::Conv2dParams p;
  bool bias;
};

// Odd sizes, every parameter off its default somewhere, N = 1 and N = 3.
const ConvCase kCases[] = {
    {"1x1 kernel", 1, 3, 7, 7, 5, 1, 1, {1, 0, 1}, true},
    {"3x3 pad 1", 3, 3, 7, 9, 5, 3, 3, {1, 1, 1}, true},
    {"3x3 stride 2 pad 1", 3, 3, 9, 7, 5, 3, 3, {2, 1, 1}, true},
    {"3x3 dilation 2", 1, 2, 11, 9, 4, 3, 3, {1, 0, 2}, false},
    {"3x3 stride 2 pad 2 dilation 2", 3, 3, 13, 11, 5, 3, 3, {2, 2, 2}, true},
    {"2x3 kernel stride 3", 1, 3, 8, 10, 5, 2, 3, {3, 0, 1}, true},
    {"LeNet-like 5x5 pad 2", 3, 1, 13, 13, 6, 5, 5, {1, 2, 1}, true},
    {"kernel wider than the image, padded", 1, 1, 3, 3, 2, 5, 5, {1, 2, 1}, false},
    {"single channel, single filter", 1, 1, 7, 1, 1, 3, 1, {1, 1, 1}, false},
    // Taps 0 and 2 of each axis read padding only (p·1 − 3 + 3r misses rows 0..1).
    {"taps that read only padding", 2, 2, 2, 2, 3, 3, 3, {1, 3, 3}, true},
};

// y(N,K,P,Q) by the definition in double, and Σ|x·w| per output, which
// bounds the rounding error of any summation order.
struct NaiveConv {
  Tensor value, abs_sum;
};
NaiveConv naive_conv(const Tensor& x, const Tensor& w, const Tensor& b, const cpu::Conv2dParams& prm) {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3), k = w.dim(0), r = w.dim(2), s = w.dim(3);
  const int64_t p = cpu::conv_out_size(h, r, prm), q = cpu::conv_out_size(wd, s, prm);
  NaiveConv out{Tensor::zeros({n, k, p, q}, DType::f64), Tensor::zeros({n, k, p, q}, DType::f64)};
  int64_t o = 0;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ik = 0; ik < k; ++ik)
      for (int64_t ip = 0; ip < p; ++ip)
        for (int64_t iq = 0; iq < q; ++iq, ++o) {
          double sum = b.defined() ? b.item(ik) : 0.0, abs_sum = std::abs(sum);
          for (int64_t ic = 0; ic < c; ++ic)
            for (int64_t ir = 0; ir < r; ++ir)
              for (int64_t is = 0; is < s; ++is) {
                const int64_t hh = ip * prm.stride - prm.padding + ir * prm.dilation;
                const int64_t ww = iq * prm.stride - prm.padding + is * prm.dilation;
                if (hh < 0 || hh >= h || ww < 0 || ww >= wd) continue;
                const double term = x.item(((in * c + ic) * h + hh) * wd + ww) * w.item(((ik * c + ic) * r + ir) * s + is);
                sum += term;
                abs_sum += std::abs(term);
              }
          out.value.set(o, sum);
          out.abs_sum.set(o, abs_sum);
        }
  return out;
}

struct ConvInputs {
  Tensor x, w, b;
};
ConvInputs make_inputs(const ConvCase& cc, DType dtype, Rng& rng) {
  return {uniform_tensor({cc.n, cc.c, cc.h, cc.w}, dtype, rng), uniform_tensor({cc.k, cc.c, cc.r, cc.s}, dtype, rng),
          cc.bias ? uniform_tensor({cc.k}, dtype, rng) : Tensor()};
}

}  // namespace

TEST_CASE("conv2d and conv2d_direct match a naive loop") {
  const uint64_t seed = 2001;
  CAPTURE(seed);
  Rng rng(seed);
  for (DType dtype : {DType::f32, DType::f64}) {
    for (const ConvCase& cc : kCases) {
      INFO("case: ", std::string(cc.name));
      const ConvInputs in = make_inputs(cc, dtype, rng);
      const NaiveConv want = naive_conv(in.x, in.w, in.b, cc.p);
      // C·R·S products and a bias: any summation order errs by at most
      // (C·R·S + 2)·u·Σ|terms|; doubled because the f64 reference has the
      // same bound when dtype is f64.
      const double u = unit_roundoff(dtype);
      const auto tol = [&](int64_t i) { return 2 * double(cc.c * cc.r * cc.s + 2) * u * want.abs_sum.item(i); };
      const std::string what = cat(cc.name, " ", name_of(dtype));
      check_close(cpu::conv2d(in.x, in.w, in.b, cc.p), want.value, tol, "conv2d " + what);
      check_close(cpu::conv2d_direct(in.x, in.w, in.b, cc.p), want.value, tol, "conv2d_direct " + what);
    }
  }
}

TEST_CASE("conv2d in f32 agrees with f64 on the same inputs") {
  const uint64_t seed = 2002;
  CAPTURE(seed);
  Rng rng(seed);
  const ConvCase cc{"3x3 stride 2 pad 1, C=3, K=5", 3, 3, 33, 17, 5, 3, 3, {2, 1, 1}, true};
  const ConvInputs in64 = make_inputs(cc, DType::f64, rng);
  Tensor y64 = cpu::conv2d(in64.x, in64.w, in64.b, cc.p);
  Tensor y32 = cpu::conv2d(in64.x.to(DType::f32), in64.w.to(DType::f32), in64.b.to(DType::f32), cc.p);
  const NaiveConv bound = naive_conv(in64.x, in64.w, in64.b, cc.p);
  // Rounding the inputs to f32 moves each term by at most 2u·|term| and the
  // f32 sum adds (C·R·S + 2)·u·Σ|terms|: within (C·R·S + 4)·u·Σ|terms|, u = 2^-24.
  const double u = unit_roundoff(DType::f32);
  check_close(y32, y64, [&](int64_t i) { return double(cc.c * cc.r * cc.s + 4) * u * bound.abs_sum.item(i); },
              "conv2d f32 vs f64");
}

TEST_CASE("conv2d_backward matches central differences for dx, dw and db") {
  const uint64_t seed = 2003;
  CAPTURE(seed);
  Rng rng(seed);
  // Small enough that every element can be perturbed: two forwards each.
  const ConvCase cases[] = {
      {"3x3 pad 1", 2, 3, 5, 6, 4, 3, 3, {1, 1, 1}, true},
      {"3x3 stride 2 pad 1", 2, 2, 7, 5, 3, 3, 3, {2, 1, 1}, true},
      {"2x3 stride 2 pad 2 dilation 2", 1, 3, 7, 8, 2, 2, 3, {2, 2, 2}, true},
      {"1x1 kernel, no bias", 3, 2, 3, 5, 3, 1, 1, {1, 0, 1}, false},
  };
  for (const ConvCase& cc : cases) {
    INFO("case: ", std::string(cc.name));
    ConvInputs in = make_inputs(cc, DType::f64, rng);
    const Tensor y = cpu::conv2d(in.x, in.w, in.b, cc.p);
    const Tensor g = uniform_tensor(y.shape(), DType::f64, rng);  // dL/dy for L = Σ y ⊙ g
    const auto loss = [&] { return dot(cpu::conv2d(in.x, in.w, in.b, cc.p), g); };
    const cpu::Conv2dGrads grads = cpu::conv2d_backward(in.x, in.w, g, cc.p, cc.bias);
    check_gradient(cat("dx, ", cc.name), in.x, grads.dx, loss);
    check_gradient(cat("dw, ", cc.name), in.w, grads.dw, loss);
    CHECK(grads.db.defined() == cc.bias);
    if (cc.bias) check_gradient(cat("db, ", cc.name), in.b, grads.db, loss);
  }
}

// The cases above are chosen by hand; these are drawn at random, each size
// and parameter over a range where taps read padding only, windows skip
// pixels and the output is 1 wide. The backward is checked as the adjoint of
// the forward: for L = <g, y>, <g, conv(x, w)> = <dx, x> = <dw, w>, since
// the conv is linear in x and in w, and db sums g over images and pixels.
TEST_CASE("conv2d at 300 random geometries: the forward matches a naive loop, the backward is its adjoint") {
  const uint64_t seed = 2008;
  CAPTURE(seed);
  Rng rng(seed);
  int drawn = 0;
  while (drawn < 300) {
    const auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng.below(uint64_t(hi - lo + 1))); };
    const ConvCase cc{"random", pick(1, 3), pick(1, 4), pick(1, 12), pick(1, 12), pick(1, 4), pick(1, 5), pick(1, 5),
                      {int(pick(1, 3)), int(pick(0, 4)), int(pick(1, 3))}, true};
    if (cpu::conv_out_size(cc.h, cc.r, cc.p) <= 0 || cpu::conv_out_size(cc.w, cc.s, cc.p) <= 0) continue;
    ++drawn;
    const std::string what = cat("N=", cc.n, " C=", cc.c, " H=", cc.h, " W=", cc.w, " K=", cc.k, " R=", cc.r,
                                 " S=", cc.s, " stride ", cc.p.stride, " pad ", cc.p.padding, " dilation ", cc.p.dilation);
    INFO(what);
    const ConvInputs in = make_inputs(cc, DType::f64, rng);
    const NaiveConv want = naive_conv(in.x, in.w, Tensor(), cc.p);
    const double u = unit_roundoff(DType::f64), crs = double(cc.c * cc.r * cc.s);
    const Tensor y = cpu::conv2d(in.x, in.w, Tensor(), cc.p);
    check_close(y, want.value, [&](int64_t i) { return 2 * (crs + 2) * u * want.abs_sum.item(i); }, "conv2d " + what);

    const Tensor g = uniform_tensor(y.shape(), DType::f64, rng);
    const cpu::Conv2dGrads grads = cpu::conv2d_backward(in.x, in.w, g, cc.p, true);
    // Each side sums the same products g·x·w, every one in at most
    // y.numel()·C·R·S + x.numel() + w.numel() additions, whatever the order.
    double magnitude = 0;
    for (int64_t i = 0; i < y.numel(); ++i) magnitude += std::abs(g.item(i)) * want.abs_sum.item(i);
    const double additions = double(y.numel()) * crs + double(in.x.numel() + in.w.numel());
    const double bound = 2 * additions * u * magnitude;
    const double forward = dot(y, g);
    const double dx_x = dot(grads.dx, in.x), dw_w = dot(grads.dw, in.w);
    CHECK_MESSAGE(std::abs(dx_x - forward) <= bound, "<dx, x> = ", dx_x, ", <g, y> = ", forward);
    CHECK_MESSAGE(std::abs(dw_w - forward) <= bound, "<dw, w> = ", dw_w, ", <g, y> = ", forward);
    const int64_t pq = y.dim(2) * y.dim(3);
    for (int64_t k = 0; k < cc.k; ++k) {
      double sum = 0, abs_sum = 0;
      for (int64_t n = 0; n < cc.n; ++n)
        for (int64_t i = 0; i < pq; ++i) {
          sum += g.item((n * cc.k + k) * pq + i);
          abs_sum += std::abs(g.item((n * cc.k + k) * pq + i));
        }
      CHECK(std::abs(grads.db.item(k) - sum) <= 2 * double(cc.n * pq) * u * abs_sum);
    }
  }
}

TEST_CASE("conv2d_backward sums dw and db over a batch split into groups") {
  const uint64_t seed = 2006;
  CAPTURE(seed);
  Rng rng(seed);
  // 37 images: dw is summed in 16 groups of 3 (the last ones short or empty),
  // which the small cases above never reach.
  const ConvCase cc{"37 images", 37, 2, 9, 7, 7, 3, 3, {1, 1, 1}, true};
  const ConvInputs in = make_inputs(cc, DType::f32, rng);
  const Tensor dy = uniform_tensor({37, 7, 9, 7}, DType::f32, rng);
  const cpu::Conv2dGrads got = cpu::conv2d_backward(in.x, in.w, dy, cc.p, true);
  Tensor dw = Tensor::zeros(in.w.shape(), DType::f64), dw_abs = Tensor::zeros(in.w.shape(), DType::f64);
  Tensor db = Tensor::zeros({7}, DType::f64), db_abs = Tensor::zeros({7}, DType::f64);
  for (int64_t n = 0; n < 37; ++n)
    for (int64_t k = 0; k < 7; ++k)
      for (int64_t p = 0; p < 9; ++p)
        for (int64_t q = 0; q < 7; ++q) {
          const double g = dy.item(((n * 7 + k) * 9 + p) * 7 + q);
          db.set(k, db.item(k) + g);
          db_abs.set(k, db_abs.item(k) + std::abs(g));
          for (int64_t c = 0; c < 2; ++c)
            for (int64_t r = 0; r < 3; ++r)
              for (int64_t s = 0; s < 3; ++s) {
                const int64_t h = p - 1 + r, w = q - 1 + s;
                if (h < 0 || h >= 9 || w < 0 || w >= 7) continue;
                const int64_t i = ((k * 2 + c) * 3 + r) * 3 + s;
                const double term = g * in.x.item(((n * 2 + c) * 9 + h) * 7 + w);
                dw.set(i, dw.item(i) + term);
                dw_abs.set(i, dw_abs.item(i) + std::abs(term));
              }
        }
  // N·P·Q = 2331 terms per entry: (N·P·Q + 1)·u·Σ|terms| bounds any order.
  const double u = unit_roundoff(DType::f32), n_terms = 37.0 * 9 * 7 + 1;
  check_close(got.dw, dw, [&](int64_t i) { return n_terms * u * dw_abs.item(i); }, "dw over 37 images");
  // db is summed in double and rounded once.
  check_close(got.db, db, [&](int64_t i) { return u * db_abs.item(i); }, "db over 37 images");
}

TEST_CASE("conv2d_backward without dx leaves it undefined and dw, db unchanged") {
  const uint64_t seed = 2005;
  CAPTURE(seed);
  Rng rng(seed);
  const ConvCase& cc = kCases[4];
  const ConvInputs in = make_inputs(cc, DType::f32, rng);
  const Tensor dy = uniform_tensor(cpu::conv2d(in.x, in.w, in.b, cc.p).shape(), DType::f32, rng);
  const cpu::Conv2dGrads full = cpu::conv2d_backward(in.x, in.w, dy, cc.p, true);
  const cpu::Conv2dGrads no_dx = cpu::conv2d_backward(in.x, in.w, dy, cc.p, true, false);
  CHECK_FALSE(no_dx.dx.defined());
  check_equal(no_dx.dw, full.dw, "dw");
  check_equal(no_dx.db, full.db, "db");
}

TEST_CASE("conv2d keeps its workspace off the caller's books once it returns") {
  const uint64_t seed = 2004;
  CAPTURE(seed);
  Rng rng(seed);
  const ConvInputs in = make_inputs(kCases[1], DType::f32, rng);
  MemoryTracker& tracker = MemoryTracker::instance();
  {
    MemoryScope scope(MemTag::activation, "test.conv_memory");
    Tensor y = cpu::conv2d(in.x, in.w, in.b, kCases[1].p);
    const cpu::Conv2dGrads grads = cpu::conv2d_backward(in.x, in.w, y, kCases[1].p, true);
    CHECK(y.storage()->tag() == MemTag::activation);
    CHECK(grads.dw.storage()->layer() == "test.conv_memory");
  }
  int found = 0;
  for (const MemRow& row : tracker.layers()) {
    if (row.layer != "test.conv_memory") continue;
    ++found;
    const MemCounts ws = row.by_tag[static_cast<int>(MemTag::workspace)];
    CHECK(ws.peak > 0);      // im2col buffers were charged to the layer as workspace
    CHECK(ws.current == 0);  // and released before returning
  }
  CHECK(found == 1);
}

TEST_CASE("conv2d errors name the shapes and values") {
  const Tensor x = Tensor::zeros({2, 3, 8, 8});
  CHECK_THROWS_WITH_AS(cpu::conv2d(x, Tensor::zeros({4, 2, 3, 3}), Tensor(), {}),
                       "conv2d: x is (2,3,8,8) but w is (4,2,3,3): channels differ (3 vs 2)", Error);
  CHECK_THROWS_WITH_AS(cpu::conv2d(Tensor::zeros({1, 1, 4, 4}), Tensor::zeros({1, 1, 5, 5}), Tensor(), {}),
                       "conv2d: output would be empty: input 4, kernel 5, padding 0, dilation 1", Error);
  CHECK_THROWS_WITH_AS(cpu::conv2d(x, Tensor::zeros({4, 3, 3, 3}), Tensor::zeros({5}), {}),
                       "conv2d: bias is (5) but w is (4,3,3,3): expected (4)", Error);
  CHECK_THROWS_WITH_AS(cpu::conv2d(Tensor::zeros({3, 8, 8}), Tensor::zeros({4, 3, 3, 3}), Tensor(), {}),
                       "conv2d: x must be 4-D (N,C,H,W), got f32 (3,8,8)", Error);
  CHECK_THROWS_WITH_AS(cpu::conv2d(x, Tensor::zeros({4, 3, 3, 3}), Tensor(), {0, 0, 1}),
                       "conv2d: stride is 0, must be at least 1", Error);
  CHECK_THROWS_WITH_AS(cpu::conv2d_direct(x, Tensor::zeros({4, 3, 3, 3}, DType::f64), Tensor(), {}),
                       "conv2d_direct: x is f32 but w is f64", Error);
  CHECK_THROWS_WITH_AS(cpu::conv2d_backward(x, Tensor::zeros({4, 3, 3, 3}), Tensor::zeros({2, 4, 5, 5}), {}, true),
                       "conv2d_backward: dy is (2,4,5,5) but the forward output is (2,4,6,6)", Error);
}
