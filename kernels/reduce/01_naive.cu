// Row reduction v1 — naive: one thread reduces one whole row.
//
// Idea: the CPU loop, with the row loop handed to threads: thread i walks
//   row i and folds it with Op (warpnet::Sum or warpnet::Max). At step j the
//   lanes of a warp read element j of 32 different rows, C floats apart:
//   every 4-byte load is its own 32-byte sector, 8x the bytes asked for, and
//   a problem with few rows has few threads.
// Changed: first version.
// Measured: not yet measured on a GPU. Emulator: `warpnet trace sum_rows/01 --size 17,1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/row_reduce.hpp"

// X: (N,C) row-major; Y: (N), Y[i] = Op over row i of X.
// Launch: block (BLOCK); grid (ceil(N/BLOCK)): thread i owns row i.
template <class Op, int BLOCK>
__global__ void reduce_naive(int N, int C, const float* __restrict__ X, float* __restrict__ Y) {
  static_assert(BLOCK % 32 == 0, "whole warps");
  const int row = blockIdx.x * BLOCK + threadIdx.x;
  if (row >= N) return;
  const float* x = X + size_t(row) * C;  // x: (C) this thread's row
  float acc = Op::identity();
  for (int j = 0; j < C; ++j) acc = Op::apply(acc, x[j]);
  Y[row] = acc;
}
