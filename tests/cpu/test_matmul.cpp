// matmul, matmul_into and matmul_backward: against a triple loop in double,
// gradients against central differences, and the errors users will see.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "cpu/ops.hpp"
#include "op_test_util.hpp"

using namespace warpnet;
using namespace warpnet::test;

namespace {

struct Transposes {
  bool a, b;
  const char* name;
};
constexpr Transposes kTransposes[] = {{false, false, "A·B"}, {false, true, "A·Bᵀ"}, {true, false, "Aᵀ·B"},
                                      {true, true, "Aᵀ·Bᵀ"}};

// A: (M,K) or (K,M) when trans_a; B: (K,N) or (N,K) when trans_b.
Shape a_shape(int64_t m, int64_t k, bool trans) { return trans ? Shape{k, m} : Shape{m, k}; }
Shape b_shape(int64_t k, int64_t n, bool trans) { return trans ? Shape{n, k} : Shape{k, n}; }

// op(A)·op(B) in double, and Σ_k |op(A)_ik·op(B)_kj|, which bounds the
// rounding error of any summation order. a, b as above; both results (M,N) f64.
struct NaiveProduct {
  Tensor value, abs_sum;
};
NaiveProduct naive_matmul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1), n = tb ? b.dim(0) : b.dim(1);
  NaiveProduct out{Tensor::zeros({m, n}, DType::f64), Tensor::zeros({m, n}, DType::f64)};
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, abs_sum = 0;
      for (int64_t l = 0; l < k; ++l) {
        const double av = ta ? a.item(l * m + i) : a.item(i * k + l);
        const double bv = tb ? b.item(j * k + l) : b.item(l * n + j);
        sum += av * bv;
        abs_sum += std::abs(av * bv);
      }
      out.value.set(i * n + j, sum);
      out.abs_sum.set(i * n + j, abs_sum);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("matmul matches a triple loop for every transpose, size and dtype") {
  const uint64_t seed = 1001;
  CAPTURE(seed);
  Rng rng(seed);
  struct Size {
    int64_t m, n, k;
  };
  // Sizes that are multiples of nothing, including the degenerate 1×1×1.
  const Size sizes[] = {{1, 1, 1}, {7, 5, 3}, {33, 17, 65}};
  for (DType dtype : {DType::f32, DType::f64}) {
    for (const Size& s : sizes) {
      for (const Transposes& t : kTransposes) {
        INFO("case: ", std::string(t.name));
        Tensor a = uniform_tensor(a_shape(s.m, s.k, t.a), dtype, rng);
        Tensor b = uniform_tensor(b_shape(s.k, s.n, t.b), dtype, rng);
        const NaiveProduct want = naive_matmul(a, b, t.a, t.b);
        Tensor c = cpu::matmul(a, b, t.a, t.b);
        CHECK(c.dtype() == dtype);
        // Any order of K products and sums errs by at most (K+1)·u·Σ|terms|
        // (first order); the f64 reference itself is far inside that for f32
        // and within the same bound for f64, hence the factor 2.
        const double u = unit_roundoff(dtype);
        check_close(c, want.value, [&](int64_t i) { return 2 * (s.k + 1) * u * want.abs_sum.item(i); },
                    cat("matmul ", t.name, " ", name_of(dtype), " M=", s.m, " N=", s.n, " K=", s.k));
      }
    }
  }
}

TEST_CASE("matmul_into scales, accumulates, and with beta 0 ignores NaN in C") {
  const uint64_t seed = 1002;
  CAPTURE(seed);
  Rng rng(seed);
  for (const Transposes& t : kTransposes) {
    INFO("case: ", std::string(t.name));
    Tensor a = uniform_tensor(a_shape(7, 5, t.a), DType::f64, rng);
    Tensor b = uniform_tensor(b_shape(5, 3, t.b), DType::f64, rng);
    const NaiveProduct ab = naive_matmul(a, b, t.a, t.b);
    // Poisoned output: beta = 0 must overwrite, never read, C.
    Tensor c = Tensor::full({7, 3}, NAN, DType::f64);
    cpu::matmul_into(a, b, c, t.a, t.b, 2.5, 0.0);
    Tensor want = Tensor::empty({7, 3}, DType::f64);
    for (int64_t i = 0; i < 21; ++i) want.set(i, 2.5 * ab.value.item(i));
    // f64, K = 5: a few u of Σ|terms| (at most 5) is below 1e-14.
    check_close(c, want, 1e-14, 0.0, "alpha·op(A)·op(B) into poisoned C");

    Tensor c0 = uniform_tensor({7, 3}, DType::f64, rng);
    Tensor acc = c0.clone();
    cpu::matmul_into(a, b, acc, t.a, t.b, -1.0, 0.5);
    for (int64_t i = 0; i < 21; ++i) want.set(i, 0.5 * c0.item(i) - ab.value.item(i));
    check_close(acc, want, 1e-14, 0.0, "alpha·op(A)·op(B) + beta·C");
  }
}

TEST_CASE("matmul_backward matches central differences for every transpose") {
  const uint64_t seed = 1003;
  CAPTURE(seed);
  Rng rng(seed);
  const int64_t m = 3, n = 4, k = 5;
  for (const Transposes& t : kTransposes) {
    INFO("case: ", std::string(t.name));
    Tensor a = uniform_tensor(a_shape(m, k, t.a), DType::f64, rng);
    Tensor b = uniform_tensor(b_shape(k, n, t.b), DType::f64, rng);
    const Tensor g = uniform_tensor({m, n}, DType::f64, rng);  // dL/dC for L = Σ C ⊙ g
    const auto loss = [&] { return dot(cpu::matmul(a, b, t.a, t.b), g); };
    const cpu::MatmulGrads grads = cpu::matmul_backward(a, b, g, t.a, t.b);
    CHECK(grads.da.shape() == a.shape());
    CHECK(grads.db.shape() == b.shape());
    check_gradient(cat("dA for ", t.name), a, grads.da, loss);
    check_gradient(cat("dB for ", t.name), b, grads.db, loss);
  }
}

TEST_CASE("matmul errors name the shapes") {
  Tensor a = Tensor::zeros({3, 4});
  Tensor b = Tensor::zeros({5, 2});
  CHECK_THROWS_WITH_AS(cpu::matmul(a, b), "matmul: A is (3,4), B is (5,2): inner dimensions differ", Error);
  CHECK_THROWS_WITH_AS(cpu::matmul(a, b, true, false),
                       "matmul: A is (3,4) transposed, B is (5,2): inner dimensions differ", Error);
  CHECK_THROWS_WITH_AS(cpu::matmul(a, Tensor::zeros({4, 2}, DType::f64)), "matmul: A is f32 but B is f64", Error);
  CHECK_THROWS_WITH_AS(cpu::matmul(a.transpose(0, 1), Tensor::zeros({3, 2})),
                       "matmul: A must be contiguous, got a strided f32 (4,3); call .contiguous() first", Error);
  CHECK_THROWS_WITH_AS(cpu::matmul(Tensor::zeros({2, 3, 4}), b), "matmul: A must be 2-D (rows,cols), got f32 (2,3,4)",
                       Error);
  CHECK_THROWS_WITH_AS(cpu::matmul(Tensor::zeros({3, 4}, DType::i32), b),
                       "matmul: A must be f32 or f64, got i32 (3,4)", Error);
  Tensor c = Tensor::zeros({3, 3});
  CHECK_THROWS_WITH_AS(cpu::matmul_into(a, Tensor::zeros({4, 2}), c, false, false),
                       "matmul_into: C is (3,3) but op(A)·op(B) is (3,2)", Error);
  CHECK_THROWS_WITH_AS(cpu::matmul_backward(a, Tensor::zeros({4, 2}), Tensor::zeros({2, 3})),
                       "matmul_backward: dC is (2,3) but op(A)·op(B) is (3,2)", Error);
}

TEST_CASE("matmul_backward skips the gradients nobody needs") {
  Rng rng(31);
  Tensor a = Tensor::empty({4, 3}), b = Tensor::empty({3, 5}), dc = Tensor::empty({4, 5});
  fill_uniform(a, rng, -1, 1);
  fill_uniform(b, rng, -1, 1);
  fill_uniform(dc, rng, -1, 1);
  const cpu::MatmulGrads both = cpu::matmul_backward(a, b, dc);
  const cpu::MatmulGrads only_b = cpu::matmul_backward(a, b, dc, false, false, false, true);
  CHECK_FALSE(only_b.da.defined());
  REQUIRE(only_b.db.defined());
  for (int64_t i = 0; i < both.db.numel(); ++i) CHECK(only_b.db.item(i) == both.db.item(i));
  const cpu::MatmulGrads only_a = cpu::matmul_backward(a, b, dc, false, false, true, false);
  CHECK_FALSE(only_a.db.defined());
  for (int64_t i = 0; i < both.da.numel(); ++i) CHECK(only_a.da.item(i) == both.da.item(i));
}
