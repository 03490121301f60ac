// Row reduction v4 — several rows per warp, float4 loads.
//
// Idea: a block per row leaves most threads idle on short rows (C = 10: 246
//   of 256) and moves one float per load. Here a row gets a group of G lanes,
//   G = the smallest power of two covering C/4, at most 32: 32/G rows per
//   warp. Each lane loads 4 consecutive floats per instruction (float4), and
//   the group reduces with shuffles of width G (warp_allreduce<Op, G>): no
//   shared memory, no barrier.
// Changed from v3: G lanes per row instead of a block; float4 loads. The
//   same bytes in a quarter of the load instructions.
// What falls back to 4-byte loads: a float4 must be 16-byte aligned, so when
//   C % 4 != 0 (or X is not 16-byte aligned; kernels/common/float4_rows.hpp
//   decides, once per launch) the G lanes run v3's scalar loop, consecutive
//   lanes on consecutive floats: coalesced, 4x the load instructions.
// Measured: not yet measured on a GPU. Emulator: `warpnet trace sum_rows/04 --size 17,1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"
#include "kernels/common/row_reduce.hpp"

// X: (N,C) row-major; Y: (N), Y[i] = Op over row i of X.
// Launch: block (BLOCK); grid (ceil(N / (BLOCK/G))): lanes g*G .. g*G+G-1 of
// the block own row blockIdx.x * (BLOCK/G) + g.
template <class Op, int BLOCK, int G>
__global__ void reduce_vectorized(int N, int C, const float* __restrict__ X, float* __restrict__ Y) {
  using warpnet::float4_rows, warpnet::load_float4, warpnet::warp_allreduce;
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, every lane in the shuffles");
  static_assert(G >= 1 && G <= 32 && (G & (G - 1)) == 0, "groups tile a warp");
  const int row = blockIdx.x * (BLOCK / G) + threadIdx.x / G;
  const int lane = threadIdx.x % G;  // this lane's place in its row's group
  const bool vector = float4_rows(X, C);
  // Rows past N load nothing but their lanes stay for the shuffles.
  const int cols = row < N ? C : 0;
  float acc = Op::identity();
  if (vector) {
    // Lanes of a group take consecutive float4s: G·16 contiguous bytes per step.
    for (int c = 4 * lane; c < cols; c += 4 * G) {
      const float4 v = load_float4(X + size_t(row) * C + c);  // v: x[row][c .. c+3]
      acc = Op::apply(Op::apply(acc, v.x), Op::apply(Op::apply(v.y, v.z), v.w));
    }
  } else {
    // The scalar fallback, coalesced: consecutive lanes on consecutive floats.
    for (int j = lane; j < cols; j += G) acc = Op::apply(acc, X[size_t(row) * C + j]);
  }
  acc = warp_allreduce<Op, G>(acc);
  if (lane == 0 && row < N) Y[row] = acc;
}
