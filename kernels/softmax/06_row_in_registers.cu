// Softmax v6 — each row read once: the row held in registers.
//
// Idea: v4 and v5 read Z twice (once for the max and sum, once more to
//   normalize): they ask for 12 bytes per element where a softmax needs only
//   8 (Z in, P out). The second read may find the row still in L2 (on an
//   H200 v03, which reads Z three times, reached 72-73% of the copy bandwidth
//   counted at 8 bytes per element, more than DRAM traffic of 16 would
//   allow), but it still waits a second time for memory and spends L2
//   bandwidth and instructions. Here T threads share a row and each loads
//   its V float4s into registers, every load issued before the first is
//   used. The row's maximum, then its sum of exp(z - max), are reduced over
//   the T threads, and P is written from the same registers: Z is asked for
//   once, 8 bytes per element.
//   The registration picks T and V from C (T * 4V >= C, little to spare):
//     C <= 128:           a group of T = G lanes of a warp, G the smallest
//                         power of two covering C/4 (as v5), V = 1;
//     128 < C <= 1024:    a whole warp, V = ceil(C/128) float4s per lane;
//     1024 < C <= 32768:  a block of T threads, the smallest power of two
//                         >= C/32 (64 .. 1024), V = ceil(C / 4T) (5 .. 8).
//   Groups and warps reduce with shuffles alone; a block adds one barrier
//   per reduction (block_allreduce_once: its warps' partials in shared memory).
//   The register array is indexed only with compile-time indices, in loops
//   unrolled in full: an index known only at run time would move it to local
//   memory, which is DRAM.
// Changed from v5: no online pass and no second read; V is a template
//   parameter, and long rows get a block instead of a warp.
// What runs when:
//   - rows float4-aligned (C % 4 == 0 and both pointers 16-byte aligned,
//     float4_rows): 16-byte loads and stores, thread t's float4s at columns
//     4(t + T·k), k < V;
//   - otherwise: the same T threads and registers with 4V 4-byte loads each,
//     thread t's floats at columns t + T·i, i < 4V: consecutive threads on
//     consecutive floats (coalesced), still one read;
//   - C > 32768, more than 1024 threads x 8 float4s hold: the registration
//     launches v5's kernel instead (a warp per row, Z read twice).
// Measured: NVIDIA H200, 2026-11-30, run 2 (bench/results/nvidia-h200-2026-11-30-run2.json,
//   `warpnet bench softmax`; GB/s of the 8 bytes per element a softmax must move):
//   0.132 ms = 4080 GB/s at 65536x1024, 96.4% of the in-run device-to-device copy bandwidth;
//   0.517 ms = 4150 GB/s at 8192x32768, 99.0% (v05 in the same run: 69.6%, 62.6%).
//   Emulator (this 2-core VM, no GPU, 2026-11-30): `warpnet trace softmax/06 --size 3,32768` asks for 7.86e5
//   global bytes, v05 1.18e6, every access at 16 sectors per request. nvcc 13,
//   sm_90a: 18 to 63 registers per instance, no spills, no stack frame.
// Run: build/bin/warpnet bench softmax (a GPU); build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"
#include "kernels/common/row_reduce.hpp"

// The reduction of v over the T threads of a row: a group of T lanes of a
// warp (shuffles only), or the whole block (T == BLOCK: one barrier, through
// `partials`, BLOCK/32 floats no other call uses). Every thread calls it.
template <class Op, int BLOCK, int T>
__device__ __forceinline__ float row_allreduce(float v, float* partials) {
  if constexpr (T <= 32) {
    return warpnet::warp_allreduce<Op, T>(v);
  } else {
    return warpnet::block_allreduce_once<Op, BLOCK>(v, partials);
  }
}

// Z: (N,C) row-major logits; P: (N,C) row-major probabilities. T * 4V >= C.
// Launch: block (BLOCK); grid (ceil(N / (BLOCK/T))): threads r*T .. r*T+T-1
// of the block own row blockIdx.x * (BLOCK/T) + r.
template <int BLOCK, int T, int V>
__global__ void __launch_bounds__(BLOCK)
    softmax_row_in_registers(int N, int C, const float* __restrict__ Z, float* __restrict__ P) {
  using warpnet::float4_rows, warpnet::load_float4, warpnet::store_float4, warpnet::Max, warpnet::Sum;
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, every lane in the shuffles");
  static_assert((T <= 32 && (T & (T - 1)) == 0) || T == BLOCK, "a power-of-two group of a warp, or the block");
  static_assert(V >= 1 && V <= 16, "V float4s per thread, in registers");
  // partials: (2, BLOCK/32) each warp's maximum, then each warp's sum; a
  // row that fits in a warp needs none (one unused float).
  __shared__ float partials[2][T > 32 ? BLOCK / 32 : 1];
  const int row = blockIdx.x * (BLOCK / T) + threadIdx.x / T;
  const int t = threadIdx.x % T;  // this thread's place among its row's T
  // Rows past N (the last block's spare groups): their threads load nothing
  // and store nothing (m = -inf makes their exps NaN, never written), but
  // stay for the shuffles.
  const int cols = row < N ? C : 0;
  const size_t first = size_t(row) * C;  // the row's offset in Z and P
  const bool vector = float4_rows(Z, C) && float4_rows(P, C);

  // x: (4V) this thread's elements of the row; -inf past its end, which
  // leaves the maximum alone and adds exp(-inf) = 0 to the sum.
  float x[4 * V];
  if (vector) {
#pragma unroll
    for (int k = 0; k < V; ++k) {  // V independent 16-byte loads in flight
      const int c = 4 * (t + T * k);
      const float4 v = c < cols ? load_float4(Z + first + c) : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
      x[4 * k + 0] = v.x;
      x[4 * k + 1] = v.y;
      x[4 * k + 2] = v.z;
      x[4 * k + 3] = v.w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < 4 * V; ++i) {
      const int c = t + T * i;
      x[i] = c < cols ? Z[first + c] : -INFINITY;
    }
  }

  float m = Max::identity();
#pragma unroll
  for (int i = 0; i < 4 * V; ++i) m = fmaxf(m, x[i]);
  m = row_allreduce<Max, BLOCK, T>(m, partials[0]);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 4 * V; ++i) {
    x[i] = expf(x[i] - m);  // the numerator, kept for the write
    s += x[i];
  }
  s = row_allreduce<Sum, BLOCK, T>(s, partials[1]);
  const float inv = 1.0f / s;

  if (vector) {
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const int c = 4 * (t + T * k);
      if (c < cols)
        store_float4(P + first + c,
                     make_float4(x[4 * k + 0] * inv, x[4 * k + 1] * inv, x[4 * k + 2] * inv, x[4 * k + 3] * inv));
    }
  } else {
#pragma unroll
    for (int i = 0; i < 4 * V; ++i) {
      const int c = t + T * i;
      if (c < cols) P[first + c] = x[i] * inv;
    }
  }
}
