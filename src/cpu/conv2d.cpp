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
// buffer; dW is summed over fixed groups of images and then over the groups,
// so every result is the same bit for bit on any thread count. Convs below
// kParallelMinMacs run on the calling thread. Eigen called inside an active
// OpenMP region stays single-threaded: its parallelize_gemm takes the serial
// path when omp_get_num_threads() > 1 (Eigen 3.4, Core/products/
// Parallelizer.h), so threads never nest. With one image the team has one
// thread, and Eigen may then split the GEMM itself.
//
// Measured 2026-11-30, LeNet-5 at batch 64, f32, 2 threads on the 2-core
// Xeon (AVX-512) dev machine, shared with other jobs (medians of 200 calls,
// best to worst of 5 rounds interleaved with PyTorch 1.13 + oneDNN):
//   conv 1→6 5×5 pad 2, 28×28, forward + backward without dx:
//     1.04–1.29 ms (PyTorch 0.73–1.30 ms)
//   conv 6→16 5×5, 14×14, forward + backward with dx:
//     1.57–2.43 ms (PyTorch 1.08–1.59 ms). The gap is this layer's forward,
//     0.48–0.75 ms against 0.17–0.27 ms: im2col of 10-pixel rows costs as
//     much as the GEMM (about 6 µs each per image on one thread).
// Reproduce: time conv2d + conv2d_backward at those shapes against
// torch.nn.functional.conv2d with torch.set_num_threads(2) (no harness is
// committed yet; bench/ is its place).
//
// 2026-12-03, on the 2-core AMD EPYC VM: im2col and col2im read the sizes
// into locals (they had been reloaded after every row, see im2col) and
// im2col zeroes a tap's padded block at once; the bias gradient is
// bias_add_backward's, in four running sums. Under cachegrind, im2col's
// instructions at LeNet-5's two layers fell from 245 to 159 million (10
// forward and backward calls of each). LeNet-5 training, `warpnet bench
// train`, five rounds with the previous build interleaved, medians: 5,411 to
// 6,446 images/s on one thread, 9,476 to 10,183 on two (8,014–14,049: this
// VM's noise).
#include <algorithm>
#include <cstring>
#include <omp.h>
#include <vector>

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
ValidRange valid_range(int64_t offset, int64_t extent, int64_t stride, int64_t outputs) {
  const int64_t begin = std::clamp<int64_t>(ceil_div(-offset, stride), 0, outputs);
  const int64_t end = std::clamp<int64_t>(ceil_div(extent - offset, stride), begin, outputs);
  return {begin, end};
}

// For every kernel row r, the output rows p whose tap lands inside the image,
// and for every kernel column s, the output columns q. They depend on r or s
// alone, so they are computed once per call, outside the per-image loops
// (each takes two integer divisions, which would dominate im2col's
// bookkeeping if repeated for every row of col).
struct TapRanges {
  std::vector<ValidRange> rows, cols;  // rows: (R), cols: (S)
};
TapRanges tap_ranges(const ConvGeometry& g) {
  TapRanges t;
  for (int64_t r = 0; r < g.r; ++r) t.rows.push_back(valid_range(r * g.dil - g.pad, g.h, g.stride, g.p));
  for (int64_t s = 0; s < g.s; ++s) t.cols.push_back(valid_range(s * g.dil - g.pad, g.w, g.stride, g.q));
  return t;
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

// x: (C,H,W) one image; col: (C·R·S, P·Q). Row (c,r,s), column (p,q) holds
// x[c, p·stride − pad + r·dil, q·stride − pad + s·dil], or 0 in the padding.
// The sizes are read into locals first: copy_run stores through memcpy, which
// may alias anything, so fields read through `g` would be reloaded from
// memory after every row (LeNet's second conv copies 1,500 rows of 10 per
// image).
template <class T>
void im2col(const T* x, const ConvGeometry& g, const TapRanges& taps, T* col) {
  const int64_t C = g.c, R = g.r, S = g.s, Q = g.q, W = g.w, HW = g.hw(), PQ = g.pq();
  const int64_t stride = g.stride, dil = g.dil, pad = g.pad;
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t r = 0; r < R; ++r) {
      const auto [p0, p1] = taps.rows[r];
      for (int64_t s = 0; s < S; ++s) {
        const auto [q0, q1] = taps.cols[s];
        T* out = col + ((c * R + r) * S + s) * PQ;
        // Zeros where the tap reads padding: the rows above and below the
        // image, and, when the tap also reads padding left or right of it,
        // the whole block at once (cheaper than a few zeros per row).
        if (q0 > 0 || q1 < Q) {
          std::fill(out, out + PQ, T(0));
        } else {
          std::fill(out, out + p0 * Q, T(0));
          std::fill(out + p1 * Q, out + PQ, T(0));
        }
        // The offset in x of the input pixel under output (p0, q0), then one
        // input row per output row (an offset: with no rows in range it would
        // point outside x).
        int64_t at = c * HW + (p0 * stride + r * dil - pad) * W + q0 * stride + s * dil - pad;
        for (int64_t p = p0; p < p1; ++p, at += stride * W) {
          const T* src = x + at;
          T* o = out + p * Q;
          if (stride == 1) {
            copy_run(o + q0, src, q1 - q0);
          } else {
            for (int64_t q = q0; q < q1; ++q) o[q] = src[(q - q0) * stride];
          }
        }
      }
    }
  }
}

// The adjoint of im2col: col (C·R·S, P·Q) is added onto dx (C,H,W), each
// entry onto the input pixel it was copied from; padding entries are dropped.
template <class T>
void col2im_add(const T* col, const ConvGeometry& g, const TapRanges& taps, T* dx) {
  const int64_t C = g.c, R = g.r, S = g.s, Q = g.q, W = g.w, HW = g.hw(), PQ = g.pq();
  const int64_t stride = g.stride, dil = g.dil, pad = g.pad;
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t r = 0; r < R; ++r) {
      const auto [p0, p1] = taps.rows[r];
      for (int64_t s = 0; s < S; ++s) {
        const auto [q0, q1] = taps.cols[s];
        const T* in = col + ((c * R + r) * S + s) * PQ;
        // As in im2col: the offset of the input pixel under output (p0, q0).
        int64_t at = c * HW + (p0 * stride + r * dil - pad) * W + q0 * stride + s * dil - pad;
        for (int64_t p = p0; p < p1; ++p, at += stride * W) {
          T* dst = dx + at;
          const T* row = in + p * Q;
          if (stride == 1) {
            add_run(dst, row + q0, q1 - q0);
          } else {
            for (int64_t q = q0; q < q1; ++q) dst[(q - q0) * stride] += row[q];
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
  const TapRanges taps = tap_ranges(g);
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
    // Dynamic: on a shared machine one thread may lose its core for a while;
    // the others then take its images instead of waiting at the barrier.
#pragma omp for schedule(dynamic)
    for (int64_t n = 0; n < g.n; ++n) {
      im2col(px + n * g.c * g.hw(), g, taps, my_col);
      MapR<T> yn(py + n * g.k * g.pq(), g.k, g.pq());  // (K, P·Q): image n of y
      yn.noalias() = wm * colm;
      if (pb) yn.colwise() += ConstMapVec<T>(pb, g.k);
    }
  }
}

// dw is summed over images in fixed groups of consecutive images, each
// group's partial in image order, then the partials in group order: the same
// arithmetic whatever the thread count or schedule, so dw is reproducible
// bit for bit. At most 16 groups, and at most 16 MiB of partials.
int64_t dw_group_count(const ConvGeometry& g, size_t elem_bytes) {
  constexpr int64_t kMaxGroups = 16, kMaxPartialBytes = int64_t(16) << 20;
  const int64_t by_memory = std::max<int64_t>(1, kMaxPartialBytes / (g.k * g.crs() * int64_t(elem_bytes)));
  return std::max<int64_t>(1, std::min({kMaxGroups, by_memory, g.n}));
}

// x: (N,C,H,W), w: (K,C,R,S), dy: (N,K,P,Q); dw written, dx when defined
template <class T>
void conv2d_backward_typed(const Tensor& x, const Tensor& w, const Tensor& dy, const ConvGeometry& g,
                           Conv2dGrads& grads) {
  const int64_t groups = dw_group_count(g, sizeof(T));
  const int teams = static_cast<int>(std::min<int64_t>(team_size(g), groups));  // a group is one thread's work
  const TapRanges taps = tap_ranges(g);
  const int64_t group_size = (g.n + groups - 1) / groups;
  Tensor col = workspace_tensor({teams, g.crs(), g.pq()}, x.dtype());       // (teams, C·R·S, P·Q)
  Tensor dw_partial = workspace_tensor({groups, g.k, g.crs()}, x.dtype());  // (groups, K, C·R·S)
  const T* px = x.data<T>();
  const T* pdy = dy.data<T>();
  T* pdx = grads.dx.defined() ? grads.dx.data<T>() : nullptr;
  T* pcol = col.data<T>();
  T* ppartial = dw_partial.data<T>();
  const ConstMapR<T> wm(w.data<T>(), g.k, g.crs());
#pragma omp parallel num_threads(teams)
  {
    MapR<T> colm(pcol + omp_get_thread_num() * g.crs() * g.pq(), g.crs(), g.pq());
#pragma omp for schedule(dynamic)
    for (int64_t group = 0; group < groups; ++group) {
      MapR<T> dwm(ppartial + group * g.k * g.crs(), g.k, g.crs());
      dwm.setZero();
      for (int64_t n = group * group_size; n < std::min(g.n, (group + 1) * group_size); ++n) {
        const ConstMapR<T> dyn(pdy + n * g.k * g.pq(), g.k, g.pq());  // (K, P·Q)
        im2col(px + n * g.c * g.hw(), g, taps, colm.data());
        dwm.noalias() += dyn * colm.transpose();
        if (!pdx) continue;
        colm.noalias() = wm.transpose() * dyn;  // col now holds dcol
        T* dxn = pdx + n * g.c * g.hw();
        std::fill(dxn, dxn + g.c * g.hw(), T(0));
        col2im_add(colm.data(), g, taps, dxn);
      }
    }
  }
  MapR<T> dwm(grads.dw.data<T>(), g.k, g.crs());
  dwm = ConstMapR<T>(ppartial, g.k, g.crs());
  for (int64_t group = 1; group < groups; ++group) dwm += ConstMapR<T>(ppartial + group * g.k * g.crs(), g.k, g.crs());
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
                            bool has_bias, bool needs_dx) {
  const ConvGeometry g = conv_geometry("conv2d_backward", x, w, p);
  require_float_input("conv2d_backward", "dy", dy);
  require_same_dtype("conv2d_backward", "x", x, "dy", dy);
  const Shape y_shape{g.n, g.k, g.p, g.q};
  WN_CHECK(dy.shape() == y_shape, "conv2d_backward: dy is ", dy.shape(), " but the forward output is ", y_shape);
  Conv2dGrads grads;
  if (needs_dx) grads.dx = Tensor::empty(x.shape(), x.dtype());
  grads.dw = Tensor::empty(w.shape(), w.dtype());
  dispatch_float(x.dtype(), "conv2d_backward",
                 [&](auto* tag) { conv2d_backward_typed<elem_t<decltype(tag)>>(x, w, dy, g, grads); });
  if (has_bias) grads.db = bias_add_backward(dy);  // (K): dy summed over images and pixels
  return grads;
}

}  // namespace warpnet::cpu
