// Inverted dropout: each element is kept with probability 1 − p and scaled
// by 1/(1 − p), so the expected output equals the input and evaluation needs
// no rescaling. The mask is drawn on the calling thread in element order,
// so the same Rng state gives the same mask whatever the thread count.
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "cpu/checks_impl.hpp"
#include "cpu/ops.hpp"

namespace warpnet::cpu {

// x: any shape; returns y and mask, both like x
DropoutResult dropout(const Tensor& x, double p, Rng& rng) {
  require_float_input("dropout", "x", x);
  WN_CHECK(p >= 0.0 && p < 1.0, "dropout: p is ", p, ", expected 0 <= p < 1");
  DropoutResult out;
  out.y = Tensor::empty(x.shape(), x.dtype());
  out.mask = Tensor::empty(x.shape(), x.dtype());
  dispatch_float(x.dtype(), "dropout", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    const T* px = x.data<T>();
    T* py = out.y.data<T>();
    T* pm = out.mask.data<T>();
    const T keep_scale = static_cast<T>(1.0 / (1.0 - p));
    const int64_t n = x.numel();
    // p = 0 keeps everything and draws nothing from the generator.
    for (int64_t i = 0; i < n; ++i) pm[i] = (p == 0.0 || rng.uniform() >= p) ? keep_scale : T(0);
    for (int64_t i = 0; i < n; ++i) py[i] = px[i] * pm[i];
  });
  return out;
}

// dy, mask: same shape; returns dx = dy ⊙ mask
Tensor dropout_backward(const Tensor& dy, const Tensor& mask) {
  require_float_input("dropout_backward", "dy", dy);
  require_float_input("dropout_backward", "mask", mask);
  require_same_dtype("dropout_backward", "dy", dy, "mask", mask);
  require_same_shape("dropout_backward", "dy", dy, "mask", mask);
  Tensor dx = Tensor::empty(dy.shape(), dy.dtype());
  dispatch_float(dy.dtype(), "dropout_backward", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    const T* pdy = dy.data<T>();
    const T* pm = mask.data<T>();
    T* pdx = dx.data<T>();
    const int64_t n = dy.numel();
#pragma omp parallel for schedule(static) if (n >= kParallelMinElements)
    for (int64_t i = 0; i < n; ++i) pdx[i] = pdy[i] * pm[i];
  });
  return dx;
}

}  // namespace warpnet::cpu
