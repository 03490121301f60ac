// matmul on Eigen: row-major maps over the tensors, transposes as Eigen
// expressions (no copy), and Eigen's blocked GEMM underneath, which forks its
// own OpenMP team for large products (see parallel.cpp for the thread count).
#include "core/tensor.hpp"
#include "cpu/checks_impl.hpp"
#include "cpu/eigen_maps.hpp"
#include "cpu/ops.hpp"

namespace warpnet::cpu {

MatmulDims matmul_dims(const char* op, const Tensor& a, const Tensor& b, bool trans_a, bool trans_b) {
  require_float_input(op, "A", a);
  require_float_input(op, "B", b);
  require_rank(op, "A", a, 2, "(rows,cols)");
  require_rank(op, "B", b, 2, "(rows,cols)");
  require_same_dtype(op, "A", a, "B", b);
  const int64_t m = trans_a ? a.dim(1) : a.dim(0);
  const int64_t ka = trans_a ? a.dim(0) : a.dim(1);
  const int64_t kb = trans_b ? b.dim(1) : b.dim(0);
  const int64_t n = trans_b ? b.dim(0) : b.dim(1);
  WN_CHECK(ka == kb, op, ": A is ", a.shape(), trans_a ? " transposed" : "", ", B is ", b.shape(),
           trans_b ? " transposed" : "", ": inner dimensions differ");
  return {m, n, ka};
}

namespace {

// C = alpha·op(A)·op(B) + beta·C with op chosen at compile time, so each of the
// four transpose combinations is its own Eigen product expression.
template <class T, class OpA, class OpB>
void gemm(const OpA& op_a, const OpB& op_b, MapR<T>& c, T alpha, T beta) {
  if (beta == T(0)) {
    // BLAS convention: beta = 0 ignores C, so NaN in uninitialized memory cannot leak in.
    c.noalias() = alpha * (op_a * op_b);
  } else {
    c *= beta;
    c.noalias() += alpha * (op_a * op_b);
  }
}

template <class T>
void matmul_typed(const Tensor& a, const Tensor& b, Tensor& c, bool trans_a, bool trans_b, double alpha,
                  double beta) {
  ConstMapR<T> ma = map_matrix(a.data<T>(), a.dim(0), a.dim(1));
  ConstMapR<T> mb = map_matrix(b.data<T>(), b.dim(0), b.dim(1));
  MapR<T> mc = map_matrix(c.data<T>(), c.dim(0), c.dim(1));
  const T al = static_cast<T>(alpha), be = static_cast<T>(beta);
  if (!trans_a && !trans_b) gemm<T>(ma, mb, mc, al, be);
  if (!trans_a && trans_b) gemm<T>(ma, mb.transpose(), mc, al, be);
  if (trans_a && !trans_b) gemm<T>(ma.transpose(), mb, mc, al, be);
  if (trans_a && trans_b) gemm<T>(ma.transpose(), mb.transpose(), mc, al, be);
}

}  // namespace

// a: (M,K) or (K,M); b: (K,N) or (N,K); returns (M,N)
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b) {
  const MatmulDims d = matmul_dims("matmul", a, b, trans_a, trans_b);
  Tensor c = Tensor::empty({d.m, d.n}, a.dtype());
  dispatch_float(a.dtype(), "matmul", [&](auto* tag) {
    matmul_typed<elem_t<decltype(tag)>>(a, b, c, trans_a, trans_b, 1.0, 0.0);
  });
  return c;
}

// a: (M,K) or (K,M); b: (K,N) or (N,K); c: (M,N), updated in place
void matmul_into(const Tensor& a, const Tensor& b, Tensor& c, bool trans_a, bool trans_b, double alpha,
                 double beta) {
  const MatmulDims d = matmul_dims("matmul_into", a, b, trans_a, trans_b);
  require_float_input("matmul_into", "C", c);
  require_same_dtype("matmul_into", "A", a, "C", c);
  WN_CHECK(c.shape() == Shape({d.m, d.n}), "matmul_into: C is ", c.shape(), " but op(A)·op(B) is (", d.m, ",", d.n,
           ")");
  // The product is written into C while A and B are still read (noalias).
  WN_CHECK(c.storage() != a.storage() && c.storage() != b.storage(),
           "matmul_into: C shares storage with A or B; write into a separate tensor");
  dispatch_float(a.dtype(), "matmul_into", [&](auto* tag) {
    matmul_typed<elem_t<decltype(tag)>>(a, b, c, trans_a, trans_b, alpha, beta);
  });
}

// C = op(A)·op(B) gives d op(A) = dC·op(B)ᵀ and d op(B) = op(A)ᵀ·dC; when an
// operand enters transposed, its gradient is the transpose of that, which is
// again one matmul with the transposes moved onto the other factors.
// a, b as in matmul; dc: (M,N); returns da shaped like a, db shaped like b
MatmulGrads matmul_backward(const Tensor& a, const Tensor& b, const Tensor& dc, bool trans_a, bool trans_b,
                            bool need_da, bool need_db) {
  const MatmulDims d = matmul_dims("matmul_backward", a, b, trans_a, trans_b);
  require_float_input("matmul_backward", "dC", dc);
  require_same_dtype("matmul_backward", "A", a, "dC", dc);
  WN_CHECK(dc.shape() == Shape({d.m, d.n}), "matmul_backward: dC is ", dc.shape(), " but op(A)·op(B) is (", d.m, ",",
           d.n, ")");
  MatmulGrads g;
  if (need_da)
    g.da = trans_a ? matmul(b, dc, trans_b, true)     // dA(K,M) = op(B)·dCᵀ
                   : matmul(dc, b, false, !trans_b);  // dA(M,K) = dC·op(B)ᵀ
  if (need_db)
    g.db = trans_b ? matmul(dc, a, true, trans_a)     // dB(N,K) = dCᵀ·op(A)
                   : matmul(a, dc, !trans_a, false);  // dB(K,N) = op(A)ᵀ·dC
  return g;
}

}  // namespace warpnet::cpu
