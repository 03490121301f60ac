// Shared by the tests/cpu suites: random inputs, element-by-element
// comparison that prints the first mismatches, the central-difference
// gradient check, and a scope that sets the CPU thread count.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>

#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "cpu/ops.hpp"
#include "tests/thread_count_scope.hpp"

namespace warpnet::test {

// Unit roundoff u: the relative error of one correctly rounded operation.
inline double unit_roundoff(DType t) { return t == DType::f32 ? 0x1.0p-24 : 0x1.0p-53; }

inline Tensor uniform_tensor(const Shape& shape, DType dtype, Rng& rng, double lo = -1.0, double hi = 1.0) {
  Tensor t = Tensor::empty(shape, dtype);
  fill_uniform(t, rng, lo, hi);
  return t;
}

// Moves every value with |v| < margin to ±margin·2, keeping its sign: for
// ops with a kink at 0 (relu), so a finite-difference step never crosses it.
inline void push_away_from_zero(Tensor& t, double margin) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.item(i);
    if (std::abs(v) < margin) t.set(i, v < 0 ? -2 * margin : 2 * margin);
  }
}

// Σ y ⊙ g in double: the scalar loss whose gradient with respect to y is g.
inline double dot(const Tensor& y, const Tensor& g) {
  REQUIRE(y.shape() == g.shape());
  double sum = 0;
  for (int64_t i = 0; i < y.numel(); ++i) sum += y.item(i) * g.item(i);
  return sum;
}

// "(n,c,h,w)" for flat index i of shape: mismatches are read by position.
inline std::string index_str(const Shape& shape, int64_t i) {
  std::vector<int64_t> idx(static_cast<size_t>(shape.rank()));
  for (int axis = shape.rank() - 1; axis >= 0; --axis) {
    idx[static_cast<size_t>(axis)] = i % shape[axis];
    i /= shape[axis];
  }
  std::ostringstream out;
  out << "(";
  for (size_t a = 0; a < idx.size(); ++a) out << (a ? "," : "") << idx[a];
  out << ")";
  return out.str();
}

// Every |got − want| <= tol(i); prints the count and the first five misses.
// NaN in either fails (the comparison is written so NaN is never "close").
inline void check_close(const Tensor& got, const Tensor& want, const std::function<double(int64_t)>& tol,
                        const std::string& what) {
  REQUIRE_MESSAGE(got.shape() == want.shape(), what, ": got ", got.shape(), ", want ", want.shape());
  int64_t misses = 0;
  double worst = 0;
  std::ostringstream first;
  first.precision(10);
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.item(i), w = want.item(i), err = std::abs(g - w), t = tol(i);
    if (err <= t) continue;
    if (misses < 5) {
      first << "\n  at " << index_str(got.shape(), i) << ": got " << g << ", want " << w << ", error " << err
            << " > tolerance " << t;
    }
    worst = std::max(worst, std::isnan(err) ? INFINITY : err);
    ++misses;
  }
  CHECK_MESSAGE(misses == 0, what, ": ", misses, " of ", got.numel(), " elements outside tolerance (worst error ",
                worst, ")", first.str());
}

// |got − want| <= atol + rtol·|want|
inline void check_close(const Tensor& got, const Tensor& want, double atol, double rtol, const std::string& what) {
  check_close(got, want, [&](int64_t i) { return atol + rtol * std::abs(want.item(i)); }, what);
}

// Bitwise the same values (used where the order of arithmetic is the same).
inline void check_equal(const Tensor& got, const Tensor& want, const std::string& what) {
  check_close(got, want, 0.0, 0.0, what);
}

// Checks an analytic gradient against central differences,
//   dL/dx_i ≈ (L(x + h·e_i) − L(x − h·e_i)) / 2h,  h = 1e-6,
// for every element of x (f64; perturbed in place and restored). loss()
// recomputes L from the current x through the op under test.
// Tolerance 1e-6·max(1, |numeric|): the truncation error of the central
// difference is h²/6·|L'''| ≈ 1e-13, and rounding in L(x ± h) adds about
// u·|L|/h ≈ 1e-10·|L|, so ~1e-8 at the loss sizes used here, 100× below the
// tolerance; a wrong gradient formula is off by O(1) relative.
inline void check_gradient(const std::string& what, Tensor& x, const Tensor& analytic,
                           const std::function<double()>& loss) {
  REQUIRE(x.dtype() == DType::f64);
  constexpr double h = 1e-6;
  Tensor numeric = Tensor::empty(x.shape(), DType::f64);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.item(i);
    x.set(i, v + h);
    const double plus = loss();
    x.set(i, v - h);
    const double minus = loss();
    x.set(i, v);
    numeric.set(i, (plus - minus) / (2 * h));
  }
  check_close(analytic, numeric, [&](int64_t i) { return 1e-6 * std::max(1.0, std::abs(numeric.item(i))); },
              what + " against central differences");
}

}  // namespace warpnet::test
