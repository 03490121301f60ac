// 2-D max and average pooling over square windows, forward and backward.
// Every (n,c) plane is independent, so the OpenMP loop runs over planes and
// each output (and each input gradient) is written by exactly one thread:
// results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/tensor.hpp"
#include "cpu/checks_impl.hpp"
#include "cpu/ops.hpp"

namespace warpnet::cpu {

namespace {

struct PoolGeometry {
  int64_t n, c, h, w;  // x: (N,C,H,W)
  int64_t p, q;        // y: (N,C,P,Q)
  int64_t kernel, stride, pad;
  int64_t planes() const { return n * c; }
  int64_t hw() const { return h * w; }
  int64_t pq() const { return p * q; }
};

// x_shape: (N,C,H,W)
PoolGeometry pool_geometry(const char* op, const Shape& x_shape, const Pool2dParams& prm) {
  WN_CHECK(x_shape.rank() == 4, op, ": x must be 4-D (N,C,H,W), got ", x_shape);
  WN_CHECK(prm.kernel >= 1, op, ": kernel is ", prm.kernel, ", must be at least 1");
  WN_CHECK(prm.stride >= 1, op, ": stride is ", prm.stride, ", must be at least 1");
  WN_CHECK(prm.padding >= 0, op, ": padding is ", prm.padding, ", must not be negative");
  // With more padding some window could cover padding only (PyTorch has the same rule).
  WN_CHECK(prm.padding <= prm.kernel / 2, op, ": padding ", prm.padding, " is more than half the kernel ", prm.kernel);
  PoolGeometry g{x_shape[0], x_shape[1], x_shape[2], x_shape[3], 0, 0, prm.kernel, prm.stride, prm.padding};
  const Conv2dParams window{prm.stride, prm.padding, 1};
  g.p = conv_out_size(g.h, g.kernel, window);
  g.q = conv_out_size(g.w, g.kernel, window);
  WN_CHECK(g.p > 0 && g.q > 0, op, ": output would be empty: input ", g.h, "x", g.w, ", kernel ", g.kernel,
           ", padding ", g.pad);
  return g;
}

// The rows (or columns) of window o inside the input: [begin, end).
struct Span {
  int64_t begin, end;
};
Span window_span(int64_t o, int64_t extent, const PoolGeometry& g) {
  const int64_t start = o * g.stride - g.pad;
  return {std::max<int64_t>(start, 0), std::min<int64_t>(start + g.kernel, extent)};
}

// The first maximum of window rows x cols of a plane xp (rows of w), and its
// index in the plane. The first maximum wins ties; a NaN wins over anything
// before it, so the last NaN is the window's, as in PyTorch's kernels
// ("val > maxval || isnan(val)"): it propagates instead of vanishing, and
// the gradient goes where PyTorch's goes. Which element
// wins is data, and a branch on it missed about every other window (LeNet-5's
// pooling took 2.6x as long): the comparison feeds a mask for the index and a
// select for the value, and a window holding a NaN (rare: that branch
// predicts well) is done again by the rule in full.
template <class T>
struct WindowMax {
  int64_t index;
  T value;
};
template <class T>
inline WindowMax<T> window_max(const T* xp, int64_t w, Span rows, Span cols) {
  int64_t best = rows.begin * w + cols.begin;
  T best_value = xp[best];
  bool saw_nan = false;
  for (int64_t ih = rows.begin; ih < rows.end; ++ih) {
    for (int64_t iw = cols.begin; iw < cols.end; ++iw) {
      const int64_t i = ih * w + iw;
      const T v = xp[i];
      const bool wins = v > best_value;
      saw_nan |= std::isnan(v);
      const int64_t take = -int64_t(wins);  // all ones where v wins
      best = (i & take) | (best & ~take);
      best_value = wins ? v : best_value;
    }
  }
  if (saw_nan) {
    best = rows.begin * w + cols.begin;
    best_value = xp[best];
    for (int64_t ih = rows.begin; ih < rows.end; ++ih) {
      for (int64_t iw = cols.begin; iw < cols.end; ++iw) {
        const T v = xp[ih * w + iw];
        if (v > best_value || std::isnan(v)) {
          best_value = v;
          best = ih * w + iw;
        }
      }
    }
  }
  return {best, best_value};
}

}  // namespace

// ---- max ------------------------------------------------------------------

// x: (N,C,H,W); returns y: (N,C,P,Q) and argmax: i32 (N,C,P,Q), an index into the H·W plane
MaxPoolResult max_pool2d(const Tensor& x, const Pool2dParams& prm) {
  require_float_input("max_pool2d", "x", x);
  const PoolGeometry g = pool_geometry("max_pool2d", x.shape(), prm);
  WN_CHECK(g.hw() <= std::numeric_limits<int32_t>::max(), "max_pool2d: plane of ", g.h, "x", g.w,
           " does not fit an i32 argmax");
  MaxPoolResult out;
  out.y = Tensor::empty({g.n, g.c, g.p, g.q}, x.dtype());
  out.argmax = Tensor::empty({g.n, g.c, g.p, g.q}, DType::i32);
  dispatch_float(x.dtype(), "max_pool2d", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    const T* px = x.data<T>();
    T* py = out.y.data<T>();
    int32_t* parg = out.argmax.data<int32_t>();
    // Every row of windows has the same column spans: found once, not per window.
    std::vector<Span> col_spans(static_cast<size_t>(g.q));
    for (int64_t q = 0; q < g.q; ++q) col_spans[static_cast<size_t>(q)] = window_span(q, g.w, g);
#pragma omp parallel for schedule(static) if (x.numel() >= kParallelMinElements)
    for (int64_t plane = 0; plane < g.planes(); ++plane) {
      const T* xp = px + plane * g.hw();
      for (int64_t p = 0; p < g.p; ++p) {
        const Span rows = window_span(p, g.h, g);
        T* y_row = py + plane * g.pq() + p * g.q;
        int32_t* arg_row = parg + plane * g.pq() + p * g.q;
        for (int64_t q = 0; q < g.q; ++q) {
          const Span cols = col_spans[static_cast<size_t>(q)];
          // A full 2x2 window (LeNet-5's pooling, and most CNNs'): the same
          // scan with extents the compiler sees are 2, so it unrolls it.
          const bool two_by_two = rows.end - rows.begin == 2 && cols.end - cols.begin == 2;
          const WindowMax<T> m =
              two_by_two ? window_max(xp, g.w, Span{rows.begin, rows.begin + 2}, Span{cols.begin, cols.begin + 2})
                         : window_max(xp, g.w, rows, cols);
          y_row[q] = m.value;
          arg_row[q] = static_cast<int32_t>(m.index);
        }
      }
    }
  });
  return out;
}

// dy, argmax: (N,C,P,Q); x_shape: (N,C,H,W). dx[plane, argmax] += dy.
Tensor max_pool2d_backward(const Tensor& dy, const Tensor& argmax, const Shape& x_shape) {
  require_float_input("max_pool2d_backward", "dy", dy);
  require_int32_input("max_pool2d_backward", "argmax", argmax);
  require_rank("max_pool2d_backward", "dy", dy, 4, "(N,C,P,Q)");
  // (argmax has the forward output's shape: say so, it is no input a user names)
  WN_CHECK(dy.shape() == argmax.shape(), "max_pool2d_backward: dy is ", dy.shape(), " but the forward output is ",
           argmax.shape());
  WN_CHECK(x_shape.rank() == 4 && x_shape[0] == dy.dim(0) && x_shape[1] == dy.dim(1), "max_pool2d_backward: dy is ",
           dy.shape(), " but x is ", x_shape, ": expected the same (N,C)");
  const int64_t planes = dy.dim(0) * dy.dim(1), pq = dy.dim(2) * dy.dim(3), hw = x_shape[2] * x_shape[3];
  const int32_t* parg = argmax.data<int32_t>();
  for (int64_t i = 0, count = argmax.numel(); i < count; ++i) {
    WN_CHECK(parg[i] >= 0 && parg[i] < hw, "max_pool2d_backward: argmax ", parg[i], " at flat index ", i,
             " is outside the ", x_shape[2], "x", x_shape[3], " plane");
  }
  Tensor dx = Tensor::empty(x_shape, dy.dtype());
  dispatch_float(dy.dtype(), "max_pool2d_backward", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    const T* pdy = dy.data<T>();
    T* pdx = dx.data<T>();
#pragma omp parallel for schedule(static) if (dx.numel() >= kParallelMinElements)
    for (int64_t plane = 0; plane < planes; ++plane) {
      T* dxp = pdx + plane * hw;
      std::fill(dxp, dxp + hw, T(0));
      for (int64_t o = plane * pq; o < (plane + 1) * pq; ++o) dxp[parg[o]] += pdy[o];
    }
  });
  return dx;
}

// ---- average ----------------------------------------------------------------

// x: (N,C,H,W); returns y: (N,C,P,Q). Every window divides by kernel², padding
// included: with floor-mode output sizes no window reaches past the padding.
Tensor avg_pool2d(const Tensor& x, const Pool2dParams& prm) {
  require_float_input("avg_pool2d", "x", x);
  const PoolGeometry g = pool_geometry("avg_pool2d", x.shape(), prm);
  Tensor y = Tensor::empty({g.n, g.c, g.p, g.q}, x.dtype());
  dispatch_float(x.dtype(), "avg_pool2d", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    const T* px = x.data<T>();
    T* py = y.data<T>();
    const T area = T(g.kernel * g.kernel);  // divided by, as PyTorch does: a multiply by 1/area can be 1 ulp off
#pragma omp parallel for schedule(static) if (x.numel() >= kParallelMinElements)
    for (int64_t plane = 0; plane < g.planes(); ++plane) {
      const T* xp = px + plane * g.hw();
      for (int64_t p = 0; p < g.p; ++p) {
        const Span rows = window_span(p, g.h, g);
        for (int64_t q = 0; q < g.q; ++q) {
          const Span cols = window_span(q, g.w, g);
          T sum = 0;
          for (int64_t ih = rows.begin; ih < rows.end; ++ih)
            for (int64_t iw = cols.begin; iw < cols.end; ++iw) sum += xp[ih * g.w + iw];
          py[plane * g.pq() + p * g.q + q] = sum / area;
        }
      }
    }
  });
  return y;
}

// dy: (N,C,P,Q); x_shape: (N,C,H,W). Each input pixel gets dy/kernel² from
// every window that covers it.
Tensor avg_pool2d_backward(const Tensor& dy, const Shape& x_shape, const Pool2dParams& prm) {
  require_float_input("avg_pool2d_backward", "dy", dy);
  const PoolGeometry g = pool_geometry("avg_pool2d_backward", x_shape, prm);
  const Shape y_shape{g.n, g.c, g.p, g.q};
  WN_CHECK(dy.shape() == y_shape, "avg_pool2d_backward: dy is ", dy.shape(), " but the forward output is ", y_shape);
  Tensor dx = Tensor::empty(x_shape, dy.dtype());
  dispatch_float(dy.dtype(), "avg_pool2d_backward", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    const T* pdy = dy.data<T>();
    T* pdx = dx.data<T>();
    const T area = T(g.kernel * g.kernel);
#pragma omp parallel for schedule(static) if (dx.numel() >= kParallelMinElements)
    for (int64_t plane = 0; plane < g.planes(); ++plane) {
      T* dxp = pdx + plane * g.hw();
      std::fill(dxp, dxp + g.hw(), T(0));
      for (int64_t p = 0; p < g.p; ++p) {
        const Span rows = window_span(p, g.h, g);
        for (int64_t q = 0; q < g.q; ++q) {
          const Span cols = window_span(q, g.w, g);
          const T share = pdy[plane * g.pq() + p * g.q + q] / area;
          for (int64_t ih = rows.begin; ih < rows.end; ++ih)
            for (int64_t iw = cols.begin; iw < cols.end; ++iw) dxp[ih * g.w + iw] += share;
        }
      }
    }
  });
  return dx;
}

}  // namespace warpnet::cpu
