// Bias broadcast and the elementwise activations, each backward beside its
// forward. Plain loops: the compiler vectorizes the cheap ones, and the
// transcendental ones (tanh, exp) go through the C library so the reference
// is accurate to the last bit or two rather than fast-approximate.
#include <cmath>

#include "core/tensor.hpp"
#include "cpu/checks_impl.hpp"
#include "cpu/ops.hpp"

namespace warpnet::cpu {

namespace {

// y[i] = f(x[i]) for every element. x: any shape; y: like x
template <class Fn>
Tensor map_unary(const char* op, const Tensor& x, Fn&& fn) {
  require_float_input(op, "x", x);
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  dispatch_float(x.dtype(), op, [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    const T* px = x.data<T>();
    T* py = y.data<T>();
    const int64_t n = x.numel();
#pragma omp parallel for schedule(static) if (n >= kParallelMinElements)
    for (int64_t i = 0; i < n; ++i) py[i] = fn(px[i]);
  });
  return y;
}

// dx[i] = f(a[i], dy[i]), a being the forward input or output. a, dy, dx: same shape
template <class Fn>
Tensor map_binary(const char* op, const char* a_name, const Tensor& a, const Tensor& dy, Fn&& fn) {
  require_float_input(op, a_name, a);
  require_float_input(op, "dy", dy);
  require_same_dtype(op, a_name, a, "dy", dy);
  require_same_shape(op, a_name, a, "dy", dy);
  Tensor dx = Tensor::empty(a.shape(), a.dtype());
  dispatch_float(a.dtype(), op, [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    const T* pa = a.data<T>();
    const T* pdy = dy.data<T>();
    T* pdx = dx.data<T>();
    const int64_t n = a.numel();
#pragma omp parallel for schedule(static) if (n >= kParallelMinElements)
    for (int64_t i = 0; i < n; ++i) pdx[i] = fn(pa[i], pdy[i]);
  });
  return dx;
}

// Spatial extent of a tensor whose axis 1 is channels: (N,C,...) -> Π of "...".
int64_t spatial_size(const Tensor& t) {
  int64_t s = 1;
  for (int i = 2; i < t.rank(); ++i) s *= t.dim(i);
  return s;
}

constexpr double kGeluScale = 0.7978845608028654;  // √(2/π)
constexpr double kGeluCubic = 0.044715;

// p[0] + ... + p[n-1] in double, in four running sums: one sum would wait
// for each addition before the next (4 cycles a value), and a conv's bias
// gradient adds up hundreds of thousands of values (LeNet-5's first layer:
// 64 images of 6 channels of 28x28).
template <class T>
double sum_in_double(const T* p, int64_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += p[i];
    s1 += p[i + 1];
    s2 += p[i + 2];
    s3 += p[i + 3];
  }
  for (; i < n; ++i) s0 += p[i];
  return (s0 + s1) + (s2 + s3);
}

}  // namespace

// ---- bias -----------------------------------------------------------------

// x: (N,C,...) any rank >= 2; b: (C). y: like x
Tensor bias_add(const Tensor& x, const Tensor& b) {
  require_float_input("bias_add", "x", x);
  require_float_input("bias_add", "b", b);
  require_same_dtype("bias_add", "x", x, "b", b);
  WN_CHECK(x.rank() >= 2, "bias_add: x must have a channel axis (N,C,...), got ", x.describe());
  WN_CHECK(b.rank() == 1 && b.dim(0) == x.dim(1), "bias_add: x is ", x.shape(), " but b is ", b.shape(),
           ": expected (", x.dim(1), ")");
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  dispatch_float(x.dtype(), "bias_add", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    const T* px = x.data<T>();
    const T* pb = b.data<T>();
    T* py = y.data<T>();
    const int64_t channels = x.dim(1), spatial = spatial_size(x), planes = x.dim(0) * channels;
    // One (n,c) plane per iteration: its bias is a single value.
#pragma omp parallel for schedule(static) if (x.numel() >= kParallelMinElements)
    for (int64_t plane = 0; plane < planes; ++plane) {
      const T bias = pb[plane % channels];
      const T* xs = px + plane * spatial;
      T* ys = py + plane * spatial;
      for (int64_t i = 0; i < spatial; ++i) ys[i] = xs[i] + bias;
    }
  });
  return y;
}

// dy: (N,C,...); returns db: (C). Each channel's sum is one thread's work, in
// double, so the result does not depend on the thread count.
Tensor bias_add_backward(const Tensor& dy) {
  require_float_input("bias_add_backward", "dy", dy);
  WN_CHECK(dy.rank() >= 2, "bias_add_backward: dy must have a channel axis (N,C,...), got ", dy.describe());
  const int64_t batch = dy.dim(0), channels = dy.dim(1), spatial = spatial_size(dy);
  Tensor db = Tensor::empty({channels}, dy.dtype());
  dispatch_float(dy.dtype(), "bias_add_backward", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    const T* pdy = dy.data<T>();
    T* pdb = db.data<T>();
#pragma omp parallel for schedule(static) if (dy.numel() >= kParallelMinElements)
    for (int64_t c = 0; c < channels; ++c) {
      double sum = 0;
      for (int64_t n = 0; n < batch; ++n) {
        const T* plane = pdy + (n * channels + c) * spatial;
        sum += sum_in_double(plane, spatial);
      }
      pdb[c] = static_cast<T>(sum);
    }
  });
  return db;
}

// dst, src: one shape and dtype; dst += src in place
void add_into(Tensor& dst, const Tensor& src) {
  require_float_input("add_into", "dst", dst);
  require_float_input("add_into", "src", src);
  require_same_dtype("add_into", "dst", dst, "src", src);
  require_same_shape("add_into", "dst", dst, "src", src);
  dispatch_float(dst.dtype(), "add_into", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    T* d = dst.data<T>();
    const T* s = src.data<T>();
    const int64_t n = dst.numel();
#pragma omp parallel for schedule(static) if (n >= kParallelMinElements)
    for (int64_t i = 0; i < n; ++i) d[i] += s[i];
  });
}

// ---- activations ------------------------------------------------------------

Tensor relu(const Tensor& x) {
  // NaN passes through (as PyTorch's relu and kernels/common/activations.hpp).
  return map_unary("relu", x, [](auto v) { return !(v <= 0) ? v : decltype(v)(0); });
}

// The kink at 0 takes gradient 0, and a NaN x passes the gradient on, as
// PyTorch's threshold_backward does (it zeroes where x <= 0, false for NaN).
Tensor relu_backward(const Tensor& x, const Tensor& dy) {
  return map_binary("relu_backward", "x", x, dy, [](auto v, auto g) { return v <= 0 ? decltype(g)(0) : g; });
}

BiasReluGrads bias_relu_backward(const Tensor& y, const Tensor& dy) {
  BiasReluGrads g;
  g.dx = relu_backward(y, dy);  // y > 0 exactly where x + b > 0
  g.db = bias_add_backward(g.dx);
  return g;
}

// GELU in its tanh form (PyTorch's gelu(x, approximate='tanh'), GPT-2's;
// PyTorch's default is the exact x·Φ(x), within 5e-4 of it):
// y = 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³). Where tanh(u) is
// −1 (x below about −10, −inf included) y is −0: the product with x would
// be −inf·0 = NaN at −inf, where the limit is 0.
Tensor gelu(const Tensor& x) {
  return map_unary("gelu", x, [](auto v) {
    using T = decltype(v);
    const T u = T(kGeluScale) * (v + T(kGeluCubic) * v * v * v);
    const T h = T(1) + std::tanh(u);
    return h == T(0) ? -T(0) : T(0.5) * v * h;
  });
}

// dy/dx = 0.5·(1 + t) + 0.5·x·(1 − t²)·√(2/π)·(1 + 3·0.044715·x²), t = tanh(u).
// Where t is ±1 the second term is 0 and is left out: x² past the type's
// range (|x| > 1.8e19 in fp32) made it 0·inf = NaN, where the slope is 1 or 0.
Tensor gelu_backward(const Tensor& x, const Tensor& dy) {
  return map_binary("gelu_backward", "x", x, dy, [](auto v, auto g) {
    using T = decltype(v);
    const T u = T(kGeluScale) * (v + T(kGeluCubic) * v * v * v);
    const T t = std::tanh(u);
    const T s = T(1) - t * t;
    const T du = T(kGeluScale) * (T(1) + T(3 * kGeluCubic) * v * v);
    return g * (T(0.5) * (T(1) + t) + (s == T(0) ? T(0) : T(0.5) * v * s * du));
  });
}

// exp of a non-positive number only, so neither branch overflows.
Tensor sigmoid(const Tensor& x) {
  return map_unary("sigmoid", x, [](auto v) {
    using T = decltype(v);
    if (v >= 0) return T(1) / (T(1) + std::exp(-v));
    const T e = std::exp(v);
    return e / (T(1) + e);
  });
}

// y = sigmoid(x): dy/dx = y·(1 − y)
Tensor sigmoid_backward(const Tensor& y, const Tensor& dy) {
  return map_binary("sigmoid_backward", "y", y, dy, [](auto s, auto g) { return g * s * (decltype(s)(1) - s); });
}

Tensor tanh(const Tensor& x) {
  return map_unary("tanh", x, [](auto v) { return std::tanh(v); });
}

// y = tanh(x): dy/dx = 1 − y²
Tensor tanh_backward(const Tensor& y, const Tensor& dy) {
  return map_binary("tanh_backward", "y", y, dy, [](auto t, auto g) { return g * (decltype(t)(1) - t * t); });
}

}  // namespace warpnet::cpu
