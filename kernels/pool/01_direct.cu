// Pooling v1 — direct: one thread per output element forward, one thread per
// INPUT element backward, each walking the windows of the definition.
//
// Idea: a pooled output reads its kernel² window and nothing else, so the
//   forward is the CPU's loop with the outer four loops turned into threads:
//   thread o owns y[o] (consecutive threads own consecutive q, so a warp's
//   reads of one window row are addresses `stride` floats apart). The
//   backward is where a GPU differs from the CPU. The CPU scatters — each
//   window adds its dy into the pixel(s) it read — which on a GPU means
//   atomics wherever windows overlap (stride < kernel), and float atomics
//   add in whatever order the threads arrive: not deterministic. Here each
//   dx element is owned by one thread that GATHERS from the windows covering
//   it (covering_windows, at most ceil(kernel/stride)² of them): no atomics,
//   and the sums come out in the same order on every run.
//   Max pooling's backward needs to know which pixel won each window. Rather
//   than store an argmax tensor in the forward (an extra output, 4 bytes per
//   y element written and read back), it recomputes the winner from x, as
//   cuDNN's pooling backward does (it takes x, y and dy): the forward and
//   backward call one max_pool_winner, with the CPU's tie rule, so they can
//   never disagree about a tie. The price: each input thread rescans every
//   window that covers it, up to kernel²·ceil(kernel/stride)² loads of x
//   (81 at 3x3 stride 1) where a stored argmax would need one, and lanes
//   whose pixel wins nothing skip the dy load (divergence). Neighbouring
//   threads rescan the same windows, so the caches should serve most of
//   those loads — to be measured on a GPU.
// Changed: first version.
// Measured: not benchmarked alone on a GPU; its launches in LeNet-5's training
//   step on an H200 are profiled in bench/results/logs/ncu-lenet5-nvidia-h200-2026-12-04-run2.csv
//   (Nsight Compute, 2026-12-04).
// Run: build/bin/test_simt -tc="registry*";
//   build/bin/warpnet trace max_pool2d_backward/01 --size 2,3,28,28,3,2,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/pool/pool_shape.hpp"

// The winner of a window: its flat index in the H·W plane and its value.
struct PoolWinner {
  int index;
  float value;
};

// The maximum of window (p, q) of the plane xp (H,W), under cpu::max_pool2d's
// rule (pool_takes_over: the first maximum, or the last NaN). Padding is not
// a candidate. Reads each pixel of the window once.
__device__ __forceinline__ PoolWinner max_pool_winner(const float* __restrict__ xp, const Pool2dShape& g, int p,
                                                      int q) {
  const PoolSpan rows = pool_window(p, g.H, g), cols = pool_window(q, g.W, g);
  PoolWinner best{-1, 0.0f};  // no window is empty (pad <= kernel/2): the first pixel replaces it
  for (int ih = rows.begin; ih < rows.end; ++ih) {
    for (int iw = cols.begin; iw < cols.end; ++iw) {
      const float v = xp[ih * g.W + iw];
      if (best.index < 0 || pool_takes_over(v, best.value)) best = {ih * g.W + iw, v};
    }
  }
  return best;
}

// x: (planes,H,W), y: (planes,P,Q). Launch: block (BLOCK), grid
// (ceil(planes·P·Q / BLOCK)): one thread per element of y. Indices are int:
// up to 2^31 elements per tensor (the registration checks).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    max_pool2d_direct(Pool2dShape g, const float* __restrict__ x, float* __restrict__ y) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, at most 1024 threads");
  const int o = blockIdx.x * BLOCK + threadIdx.x;  // y's linear index: q fastest, then p, plane
  if (o >= g.planes * g.P * g.Q) return;
  const int q = o % g.Q, p = o / g.Q % g.P, plane = o / (g.Q * g.P);
  y[o] = max_pool_winner(x + plane * g.H * g.W, g, p, q).value;
}

// x, dx: (planes,H,W), dy: (planes,P,Q). dx[i] = Σ dy over the windows that
// cover pixel i and that pixel i wins. Launch: block (BLOCK), grid
// (ceil(planes·H·W / BLOCK)): one thread per element of dx (pixels that no
// window covers, or that win none, get 0).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    max_pool2d_backward_direct(Pool2dShape g, const float* __restrict__ x, const float* __restrict__ dy,
                               float* __restrict__ dx) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, at most 1024 threads");
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // dx's linear index: iw fastest, then ih, plane
  if (i >= g.planes * g.H * g.W) return;
  const int iw = i % g.W, ih = i / g.W % g.H, plane = i / (g.W * g.H);
  const float* xp = x + plane * g.H * g.W;     // (H,W): this pixel's plane of x
  const float* dyp = dy + plane * g.P * g.Q;  // (P,Q): its plane of dy
  const PoolSpan ps = covering_windows(ih, g.P, g), qs = covering_windows(iw, g.Q, g);
  // Windows in the CPU's order (p, then q), so the fp32 sum adds the same
  // terms in the same order as cpu::max_pool2d_backward: the same bits.
  float sum = 0.0f;
  for (int p = ps.begin; p < ps.end; ++p)
    for (int q = qs.begin; q < qs.end; ++q)
      if (max_pool_winner(xp, g, p, q).index == ih * g.W + iw) sum += dyp[p * g.Q + q];
  dx[i] = sum;
}

// x: (planes,H,W), y: (planes,P,Q); y = (Σ of the window's pixels) / kernel²,
// padding counted as zeros. Launch: as max_pool2d_direct.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    avg_pool2d_direct(Pool2dShape g, const float* __restrict__ x, float* __restrict__ y) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, at most 1024 threads");
  const int o = blockIdx.x * BLOCK + threadIdx.x;
  if (o >= g.planes * g.P * g.Q) return;
  const int q = o % g.Q, p = o / g.Q % g.P, plane = o / (g.Q * g.P);
  const float* xp = x + plane * g.H * g.W;
  const PoolSpan rows = pool_window(p, g.H, g), cols = pool_window(q, g.W, g);
  float sum = 0.0f;
  for (int ih = rows.begin; ih < rows.end; ++ih)
    for (int iw = cols.begin; iw < cols.end; ++iw) sum += xp[ih * g.W + iw];
  y[o] = sum / float(g.kernel * g.kernel);  // divided, as the CPU and PyTorch do (× 1/kernel² can be 1 ulp off)
}

// dy: (planes,P,Q), dx: (planes,H,W); dx[i] = (Σ dy over the windows
// covering pixel i) / kernel². Launch: as max_pool2d_backward_direct. The
// CPU scatters dy/kernel² into each window; the gather sums first and
// divides once, one division per pixel instead of one per window.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    avg_pool2d_backward_direct(Pool2dShape g, const float* __restrict__ dy, float* __restrict__ dx) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, at most 1024 threads");
  const int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i >= g.planes * g.H * g.W) return;
  const int iw = i % g.W, ih = i / g.W % g.H, plane = i / (g.W * g.H);
  const float* dyp = dy + plane * g.P * g.Q;
  const PoolSpan ps = covering_windows(ih, g.P, g), qs = covering_windows(iw, g.Q, g);
  float sum = 0.0f;
  for (int p = ps.begin; p < ps.end; ++p)
    for (int q = qs.begin; q < qs.end; ++q) sum += dyp[p * g.Q + q];
  dx[i] = sum / float(g.kernel * g.kernel);
}
