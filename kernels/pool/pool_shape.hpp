// The geometry every pooling kernel reads, passed by value as one kernel
// argument, and the window arithmetic of src/cpu/pool2d.cpp: x (N,C,H,W) as
// planes = N·C planes of H·W, y (N,C,P,Q), square windows of kernel² pixels.
// Window (p,q) covers rows p·stride − pad .. p·stride − pad + kernel − 1 and
// the same columns, clipped to the image. Padding is never a value: max
// pooling picks among the pixels inside, average pooling adds zeros for it
// (dividing by kernel² always, count_include_pad). The CPU's checks hold:
// pad <= kernel/2, so no window lies in the padding alone, and P, Q >= 1.
#pragma once
#include "kernels/common/cuda_compat.hpp"

struct Pool2dShape {
  int planes, H, W;  // x: (planes, H, W), planes = N·C
  int P, Q;          // y: (planes, P, Q)
  int kernel, stride, pad;
};

// Max pooling's rule, cpu::max_pool2d's: scanning a window in row-major
// order, a later value `v` takes it from `best` only if strictly greater (the
// first maximum wins a tie), or if it is NaN (v != v), so the last NaN is
// the window's, as in PyTorch's kernels.
__host__ __device__ __forceinline__ bool pool_takes_over(float v, float best) { return v > best || v != v; }

// A half-open range [begin, end) of indices: rows, columns or windows.
struct PoolSpan {
  int begin, end;
};

// The input rows (or columns) of window o along an axis of `extent` pixels:
// window_span in src/cpu/pool2d.cpp.
__host__ __device__ __forceinline__ PoolSpan pool_window(int o, int extent, const Pool2dShape& g) {
  const int start = o * g.stride - g.pad;
  return {start > 0 ? start : 0, start + g.kernel < extent ? start + g.kernel : extent};
}

// The windows o in [0, outputs) that cover input index i along an axis: those
// with o·stride − pad <= i < o·stride − pad + kernel, that is
// (i + pad − kernel) / stride < o <= (i + pad) / stride. i + pad >= 0, so the
// integer divisions are floors. Empty (begin >= end) when stride > kernel
// leaves i between windows, or i lies past the last window.
__host__ __device__ __forceinline__ PoolSpan covering_windows(int i, int outputs, const Pool2dShape& g) {
  const int first = i + g.pad < g.kernel ? 0 : (i + g.pad - g.kernel) / g.stride + 1;
  const int last = (i + g.pad) / g.stride;
  return {first, last + 1 < outputs ? last + 1 : outputs};
}
