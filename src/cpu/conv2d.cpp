// conv2d on the CPU: im2col + one Eigen GEMM per image, images spread over
// the OpenMP team.
//
// Idea: output pixel (k,p,q) is the dot product of filter k, a (C,R,S) block,
// with the input patch under it. Copy every patch of one image into a column
// of col (C·R·S, P·Q) ("im2col"); the whole image is then one matrix product
//   y_n (K, P·Q) = W (K, C·R·S) · col (C·R·S, P·Q),
// written straight into the image's NCHW slice of y, since (K, P·Q) row-major
// is exactly that slice. The backward reuses the same col:
//   dW += dy_n · colᵀ         (K, C·R·S), summed over images
//   dcol = Wᵀ · dy_n          (C·R·S, P·Q), then "col2im" adds each column
//                             back onto the input patch it came from = dx_n.
// Threads: the parallel loop is over images, each thread with its own col
// buffer (and its own dW partial, reduced after the loop in thread order).
// Eigen called inside an active OpenMP region stays single-threaded: its
// parallelize_gemm returns to the serial path when omp_get_num_threads() > 1
// (Eigen 3.4, Core/products/Parallelizer.h), so threads never nest. With one
// image the team has one thread, and Eigen may then split the GEMM itself.
//
// Measured (2 threads, Xeon with AVX-512, shared machine, 2026): LeNet-5 at
// batch 64, conv 1→6 5×5 pad 2 on 28×28 and conv 6→16 5×5 on 14×14 — see the
// table in the final report of the CPU-ops task; PyTorch 1.13 (oneDNN) on the
// same machine is the yardstick.
#include <algorithm>
#include <cstring>
#include <omp.h>

#include "core/tensor.hpp"
#include "cpu/checks_impl.hpp"
#include "cpu/eigen_maps.hpp"
#include "cpu/ops.hpp"

namespace warpnet::cpu {

namespace {

// floor(a / b) for b > 0 and any sign of a (C++ division truncates toward 0).
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

struct ConvGeometry {
  int64_t n, c, h, w;  // x: (N,C,H,W)
  int64_t k, r, s;     // w: (K,C,R,S)
  int64_t p, q;        // y: (N,K,P,Q)
  int64_t stride, pad, dil;
  int64_t crs() const { return c * r * s; }
  int64_t pq() const { return p * q; }
  int64_t hw() const { return h * w; }
};

// x: (N,C,H,W), w: (K,C,R,S). Checks everything the conv ops share.
ConvGeometry conv_geometry(const char* op, const Tensor& x, const Tensor& w, const Conv2dParams& prm) {
  require_float_input(op, "x", x);
  require_float_input(op, "w", w);
  require_rank(op, "x", x, 4, "(N,C,H,W)");
  require_rank(op, "w", w, 4, "(K,C,R,S)");
  require_same_dtype(op, "x", x, "w", w);
  WN_CHECK(x.dim(1) == w.dim(1), op, ": x is ", x.shape(), " but w is ", w.shape(), ": channels differ (", x.dim(1),
           " vs ", w.dim(1), ")");
  WN_CHECK(prm.stride >= 1, op, ": stride is ", prm.stride, ", must be at least 1");
  WN_CHECK(prm.dilation >= 1, op, ": dilation is ", prm.dilation, ", must be at least 1");
  WN_CHECK(prm.padding >= 0, op, ": padding is ", prm.padding, ", must not be negative");
  ConvGeometry g{x.dim(0), x.dim(1), x.dim(2), x.dim(3), w.dim(0), w.dim(2), w.dim(3), 0, 0,
                 prm.stride, prm.padding, prm.dilation};
  g.p = conv_out_size(g.h, g.r, prm);
  g.q = conv_out_size(g.w, g.s, prm);
  WN_CHECK(g.p > 0, op, ": output would be empty: input ", g.h, ", kernel ", g.r, ", padding ", g.pad,
           ", dilation ", g.dil);
  WN_CHECK(g.q > 0, op, ": output would be empty: input ", g.w, ", kernel ", g.s, ", padding ", g.pad,
           ", dilation ", g.dil);
  return g;
}

// bias: (K) or undefined
void check_bias(const char* op, const Tensor& bias, const Tensor& w) {
  if (!bias.defined()) return;
  require_float_input(op, "bias", bias);
  require_same_dtype(op, "w", w, "bias", bias);
  WN_CHECK(bias.rank() == 1 && bias.dim(0) == w.dim(0), op, ": bias is ", bias.shape(), " but w is ", w.shape(),
           ": expected (", w.dim(0), ")");
}

// Below this many multiply-adds a conv runs on the calling thread: waking a
// second thread costs microseconds when it is idle, and a scheduler time
// slice when its core is busy with another process.
constexpr int64_t kParallelMinMacs = int64_t(1) << 18;

int64_t conv_macs(const ConvGeometry& g) { return g.n * g.k * g.crs() * g.pq(); }

// One thread per image at most: a thread with no image would only cost a
// workspace buffer.
int team_size(const ConvGeometry& g) {
  if (conv_macs(g) < kParallelMinMacs) return 1;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), g.n)));
}

// The outputs o whose input coordinate o·stride + offset lies inside
// [0, extent): [begin, end). Outside it the kernel tap reads padding.
struct ValidRange {
  int64_t begin, end;
};
inline ValidRange valid_range(int64_t offset, int64_t extent, int64_t stride, int64_t outputs) {
  const int64_t begin = std::clamp<int64_t>(ceil_div(-offset, stride), 0, outputs);
  const int64_t end = std::clamp<int64_t>(ceil_div(extent - offset, stride), begin, outputs);
  return {begin, end};
}

// Rows of an im2col matrix are short (Q is 10 to 28 in LeNet): loop overhead
// and memcpy calls would cost more than the bytes moved. These helpers move
// 32-byte chunks, each a single vector load and store once compiled.
template <class T>
inline constexpr int64_t kChunk = 32 / int64_t(sizeof(T));

// dst[0,n) = src[0,n); the two do not overlap.
template <class T>
inline void copy_run(T* dst, const T* src, int64_t n) {
  constexpr int64_t v = kChunk<T>;
  if (n < v) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
    return;
  }
  int64_t i = 0;
  for (; i + v <= n; i += v) std::memcpy(dst + i, src + i, sizeof(T) * v);
  // The last chunk overlaps the one before: writing a few values twice is
  // cheaper than a scalar tail.
  if (i < n) std::memcpy(dst + n - v, src + n - v, sizeof(T) * v);
}

// dst[0,n) += src[0,n); the two do not overlap.
template <class T>
inline void add_run(T* dst, const T* src, int64_t n) {
  constexpr int64_t v = kChunk<T>;
  int64_t i = 0;
  for (; i + v <= n; i += v) {
    for (int64_t j = 0; j < v; ++j) dst[i + j] += src[i + j];
  }
  for (; i < n; ++i) dst[i] += src[i];
}

// One im2col row, output rows [0, rows): out row p gets n input values
// src[p·src_step + j·stride] at columns [q0, q0+n), zeros elsewhere in its
// q columns. Kept apart from im2col so the compiler holds these few values in
// registers; the stride-1 case is a chunked copy.
template <class T>
inline void fill_patch_rows(T* out, const T* src, int64_t rows, int64_t q, int64_t q0, int64_t n, int64_t src_step,
                            int64_t stride) {
  for (int64_t p = 0; p < rows; ++p, out += q, src += src_step) {
    for (int64_t j = 0; j < q0; ++j) out[j] = T(0);
    if (stride == 1) {
      copy_run(out + q0, src, n);
    } else {
      for (int64_t j = 0; j < n; ++j) out[q0 + j] = src[j * stride];
    }
    for (int64_t j = q0 + n; j < q; ++j) out[j] = T(0);
  }
}

// x: (C,H,W) one image; col: (C·R·S, P·Q). Row (c,r,s), column (p,q) holds
// x[c, p·stride − pad + r·dil, q·stride − pad + s·dil], or 0 in the padding.
// For each row, the output rows p and columns q whose tap lands inside the
// image are computed once, so the copy loops carry no bounds tests.
template <class T>
void im2col(const T* x, const ConvGeometry& g, T* col) {
  for (int64_t c = 0; c < g.c; ++c) {
    for (int64_t r = 0; r < g.r; ++r) {
      const int64_t h_offset = r * g.dil - g.pad;
      const auto [p0, p1] = valid_range(h_offset, g.h, g.stride, g.p);
      for (int64_t s = 0; s < g.s; ++s) {
        T* row = col + ((c * g.r + r) * g.s + s) * g.pq();
        const int64_t w_offset = s * g.dil - g.pad;
        const auto [q0, q1] = valid_range(w_offset, g.w, g.stride, g.q);
        std::fill(row, row + p0 * g.q, T(0));
        if (p1 > p0) {
          // The input pixel under output (p0, q0).
          const T* src = x + c * g.hw() + (p0 * g.stride + h_offset) * g.w + q0 * g.stride + w_offset;
          fill_patch_rows(row + p0 * g.q, src, p1 - p0, g.q, q0, q1 - q0, g.stride * g.w, g.stride);
        }
        std::fill(row + p1 * g.q, row + g.pq(), T(0));
      }
    }
  }
}

// The adjoint of im2col: col (C·R·S, P·Q) is added onto dx (C,H,W), each
// entry onto the input pixel it was copied from; padding entries are dropped.
template <class T>
void col2im_add(const T* col, const ConvGeometry& g, T* dx) {
  for (int64_t c = 0; c < g.c; ++c) {
    T* dxc = dx + c * g.hw();
    for (int64_t r = 0; r < g.r; ++r) {
      const int64_t h_offset = r * g.dil - g.pad;
      const auto [p0, p1] = valid_range(h_offset, g.h, g.stride, g.p);
      for (int64_t s = 0; s < g.s; ++s) {
        const T* row = col + ((c * g.r + r) * g.s + s) * g.pq();
        const int64_t w_offset = s * g.dil - g.pad;
        const auto [q0, q1] = valid_range(w_offset, g.w, g.stride, g.q);
        for (int64_t p = p0; p < p1; ++p) {
          const T* in = row + p * g.q;
          // The input pixel under output column q0; column q adds onto dst[(q − q0)·stride].
          T* dst = dxc + (p * g.stride + h_offset) * g.w + q0 * g.stride + w_offset;
          if (g.stride == 1) {
            add_run(dst, in + q0, q1 - q0);
          } else {
            for (int64_t q = q0; q < q1; ++q) dst[(q - q0) * g.stride] += in[q];
          }
        }
      }
    }
  }
}

// x: (N,C,H,W), w: (K,C,R,S), bias: (K) or undefined; y: (N,K,P,Q) written
template <class T>
void conv2d_forward_typed(const Tensor& x, const Tensor& w, const Tensor& bias, const ConvGeometry& g, Tensor& y) {
  const int teams = team_size(g);
  Tensor col = workspace_tensor({teams, g.crs(), g.pq()}, x.dtype());  // (teams, C·R·S, P·Q)
  const T* px = x.data<T>();
  const T* pb = bias.defined() ? bias.data<T>() : nullptr;
  T* py = y.data<T>();
  T* pcol = col.data<T>();
  const ConstMapR<T> wm(w.data<T>(), g.k, g.crs());
#pragma omp parallel num_threads(teams)
  {
    T* my_col = pcol + omp_get_thread_num() * g.crs() * g.pq();
    const ConstMapR<T> colm(my_col, g.crs(), g.pq());
#pragma omp for schedule(static)
    for (int64_t n = 0; n < g.n; ++n) {
      im2col(px + n * g.c * g.hw(), g, my_col);
      MapR<T> yn(py + n * g.k * g.pq(), g.k, g.pq());  // (K, P·Q): image n of y
      yn.noalias() = wm * colm;
      if (pb) yn.colwise() += ConstMapVec<T>(pb, g.k);
    }
  }
}

// x: (N,C,H,W), w: (K,C,R,S), dy: (N,K,P,Q); dx, dw, db (K) or undefined written
template <class T>
void conv2d_backward_typed(const Tensor& x, const Tensor& w, const Tensor& dy, const ConvGeometry& g,
                           Conv2dGrads& grads) {
  const int teams = team_size(g);
  Tensor col = workspace_tensor({teams, g.crs(), g.pq()}, x.dtype());  // (teams, C·R·S, P·Q)
  // Thread 0 accumulates straight into dw; threads 1.. into their own partial.
  Tensor dw_partial = workspace_tensor({teams - 1, g.k, g.crs()}, x.dtype());  // (teams−1, K, C·R·S)
  dw_partial.fill(0);
  const T* px = x.data<T>();
  const T* pdy = dy.data<T>();
  T* pdx = grads.dx.data<T>();
  T* pdw = grads.dw.data<T>();
  T* pcol = col.data<T>();
  T* ppartial = dw_partial.data<T>();
  const ConstMapR<T> wm(w.data<T>(), g.k, g.crs());
#pragma omp parallel num_threads(teams)
  {
    const int t = omp_get_thread_num();
    MapR<T> colm(pcol + t * g.crs() * g.pq(), g.crs(), g.pq());
    MapR<T> dwm(t == 0 ? pdw : ppartial + (t - 1) * g.k * g.crs(), g.k, g.crs());
#pragma omp for schedule(static)
    for (int64_t n = 0; n < g.n; ++n) {
      const ConstMapR<T> dyn(pdy + n * g.k * g.pq(), g.k, g.pq());  // (K, P·Q)
      im2col(px + n * g.c * g.hw(), g, colm.data());
      dwm.noalias() += dyn * colm.transpose();
      colm.noalias() = wm.transpose() * dyn;  // col now holds dcol
      T* dxn = pdx + n * g.c * g.hw();
      std::fill(dxn, dxn + g.c * g.hw(), T(0));
      col2im_add(colm.data(), g, dxn);
    }
  }
  MapR<T> dwm(pdw, g.k, g.crs());
  for (int t = 1; t < teams; ++t) dwm += ConstMapR<T>(ppartial + (t - 1) * g.k * g.crs(), g.k, g.crs());

  if (!grads.db.defined()) return;
  T* pdb = grads.db.data<T>();
  // db[k] = Σ over images and pixels of dy, in double; one channel per thread.
#pragma omp parallel for schedule(static) if (dy.numel() >= kParallelMinElements)
  for (int64_t k = 0; k < g.k; ++k) {
    double sum = 0;
    for (int64_t n = 0; n < g.n; ++n) {
      const T* plane = pdy + (n * g.k + k) * g.pq();
      for (int64_t i = 0; i < g.pq(); ++i) sum += plane[i];
    }
    pdb[k] = static_cast<T>(sum);
  }
}

// The definition, loop by loop, accumulated in double. Each output element is
// one thread's work, so the result does not depend on the thread count.
template <class T>
void conv2d_direct_typed(const Tensor& x, const Tensor& w, const Tensor& bias, const ConvGeometry& g, Tensor& y) {
  const T* px = x.data<T>();
  const T* pw = w.data<T>();
  const T* pb = bias.defined() ? bias.data<T>() : nullptr;
  T* py = y.data<T>();
#pragma omp parallel for collapse(2) schedule(static) if (conv_macs(g) >= kParallelMinMacs)
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t k = 0; k < g.k; ++k) {
      for (int64_t p = 0; p < g.p; ++p) {
        for (int64_t q = 0; q < g.q; ++q) {
          double acc = pb ? pb[k] : 0.0;
          for (int64_t c = 0; c < g.c; ++c) {
            for (int64_t r = 0; r < g.r; ++r) {
              const int64_t ih = p * g.stride - g.pad + r * g.dil;
              if (ih < 0 || ih >= g.h) continue;
              for (int64_t s = 0; s < g.s; ++s) {
                const int64_t iw = q * g.stride - g.pad + s * g.dil;
                if (iw < 0 || iw >= g.w) continue;
                acc += double(px[((n * g.c + c) * g.h + ih) * g.w + iw]) * pw[((k * g.c + c) * g.r + r) * g.s + s];
              }
            }
          }
          py[((n * g.k + k) * g.p + p) * g.q + q] = static_cast<T>(acc);
        }
      }
    }
  }
}

}  // namespace

// The kernel spans dilation·(kernel−1)+1 input pixels; 0 when it does not fit.
int64_t conv_out_size(int64_t in, int64_t kernel, const Conv2dParams& p) {
  WN_CHECK(p.stride >= 1 && p.dilation >= 1, "conv_out_size: stride ", p.stride, " and dilation ", p.dilation,
           " must both be at least 1");
  const int64_t span = in + 2 * int64_t(p.padding);
  const int64_t extent = int64_t(p.dilation) * (kernel - 1) + 1;
  return span < extent ? 0 : (span - extent) / p.stride + 1;
}

// x: (N,C,H,W), w: (K,C,R,S), bias: (K) or undefined; returns y: (N,K,P,Q)
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p) {
  const ConvGeometry g = conv_geometry("conv2d", x, w, p);
  check_bias("conv2d", bias, w);
  Tensor y = Tensor::empty({g.n, g.k, g.p, g.q}, x.dtype());
  dispatch_float(x.dtype(), "conv2d", [&](auto* tag) { conv2d_forward_typed<elem_t<decltype(tag)>>(x, w, bias, g, y); });
  return y;
}

// x: (N,C,H,W), w: (K,C,R,S), bias: (K) or undefined; returns y: (N,K,P,Q)
Tensor conv2d_direct(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p) {
  const ConvGeometry g = conv_geometry("conv2d_direct", x, w, p);
  check_bias("conv2d_direct", bias, w);
  Tensor y = Tensor::empty({g.n, g.k, g.p, g.q}, x.dtype());
  dispatch_float(x.dtype(), "conv2d_direct",
                 [&](auto* tag) { conv2d_direct_typed<elem_t<decltype(tag)>>(x, w, bias, g, y); });
  return y;
}

// x: (N,C,H,W), w: (K,C,R,S), dy: (N,K,P,Q); returns dx like x, dw like w, db (K)
Conv2dGrads conv2d_backward(const Tensor& x, const Tensor& w, const Tensor& dy, const Conv2dParams& p,
                            bool has_bias) {
  const ConvGeometry g = conv_geometry("conv2d_backward", x, w, p);
  require_float_input("conv2d_backward", "dy", dy);
  require_same_dtype("conv2d_backward", "x", x, "dy", dy);
  const Shape y_shape{g.n, g.k, g.p, g.q};
  WN_CHECK(dy.shape() == y_shape, "conv2d_backward: dy is ", dy.shape(), " but the forward output is ", y_shape);
  Conv2dGrads grads;
  grads.dx = Tensor::empty(x.shape(), x.dtype());
  grads.dw = Tensor::zeros(w.shape(), w.dtype());
  if (has_bias) grads.db = Tensor::empty({g.k}, w.dtype());
  dispatch_float(x.dtype(), "conv2d_backward",
                 [&](auto* tag) { conv2d_backward_typed<elem_t<decltype(tag)>>(x, w, dy, g, grads); });
  return grads;
}

}  // namespace warpnet::cpu
