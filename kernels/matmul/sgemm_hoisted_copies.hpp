// One fp32 operand's k-tiles into v8's k-major shared tile, with each
// thread's copies worked out once before the k-loop: what matmul v10's
// hoisted candidates (sgemm_v9::block_tile<..., HOISTED = true>) copy with
// instead of v8's stage_tile. hoisted_copies.hpp does the same for the
// mma.sync rungs' bf16 tiles.
//
// Why: v8's stage_tile derives every copy from its index at every k-step:
//   its k and j by division, the global address from them, both edge tests.
//   In v09's SASS (nvcc 13.0, sm_90a, NN) that is most of the 776
//   instructions its main loop holds beside 1024 FFMA (57% FFMA; lesson 04,
//   "Counting the loop"), and on the CUDA cores every one of them takes an
//   FFMA's issue slot. A thread's copies of a tile differ by fixed steps,
//   and a k-step moves them all alike, so each thread keeps its first
//   element's index, the distance to its next ones and its edge tests.
// Map: the same elements to the same threads as stage_tile, so the shared
//   writes land as they did (conflict-free):
//   KMajor (X stored (K, J), contiguous along the tile's rows): 16-byte
//     copies, consecutive lanes along a row; a thread's copies go down k,
//     THREADS * 4 / W rows apart. Only with vec (J % 4 == 0, aligned):
//     where `apply` says no, the launch runs v8's stage_tile instead.
//   Transposing (X stored (J, K), contiguous along k): one float a copy; a
//     warp's lanes take 8 k x 4 j (v8's layout); a thread's copies are P =
//     8W / THREADS columns groups THREADS / 8 apart, times BK / 8 bands of 8 k.
#pragma once
#include <cstdint>

#include "kernels/common/ptx.hpp"

namespace sgemm_copies {

// Whether hoisted copies can take C = op(A) @ op(B)'s operands: each one
// stored k-major (A as (K,M) when TA, B as (K,N) unless TB) has rows of
// whole float4s from a 16-byte aligned start. The others copy a float at
// a time and take any shape. Host code: the launch's choice of instance.
template <bool TA, bool TB>
inline bool apply(int M, int N, const float* A, const float* B) {
  const auto whole_float4s = [](int row, const float* p) {
    return row % 4 == 0 && reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
  };
  return (!TA || whole_float4s(M, A)) && (TB || whole_float4s(N, B));
}

// dst: (BK, W) shared, row stride LD; dst[k][j] = X(j0 + j, k0 + k), 0 past J or K.
template <int BK, int W, int LD, int THREADS, bool KMajor>
struct OperandCopies {
  // KMajor: 16-byte chunks, W/4 to a row, ROWS_PER_PASS rows of k a pass.
  static constexpr int CHUNKS_PER_ROW = W / 4, ROWS_PER_PASS = THREADS / CHUNKS_PER_ROW;
  // Transposing: PASSES column groups, BANDS bands of 8 k.
  static constexpr int PASSES = 8 * W / THREADS, BANDS = BK / 8;
  static constexpr int COPIES = KMajor ? BK * CHUNKS_PER_ROW / THREADS : PASSES * BANDS;
  static_assert(!KMajor || (THREADS % CHUNKS_PER_ROW == 0 && BK % ROWS_PER_PASS == 0), "KMajor: whole rows a pass");
  static_assert(KMajor || ((8 * W) % THREADS == 0 && BK % 8 == 0 && THREADS % 8 == 0),
                "transposing: whole 8 k x W bands");
  static_assert(KMajor || PASSES <= 32, "one bit a pass in inside_fixed");

  size_t first;           // element index in X of this thread's copy 0 at k0 = 0 (read only when inside)
  size_t pass;            // KMajor: ROWS_PER_PASS rows of X; transposing: THREADS / 8 rows of X
  int k_first;            // copy 0's k at k0 = 0
  int k_stride;           // elements of X a unit of k moves: J (KMajor) or 1
  uint32_t inside_fixed;  // KMajor: nonzero when the chunk's columns are inside J; transposing: bit p, pass p's row
  int shared_first;       // copy 0's element offset in dst

  __device__ OperandCopies(int j0, int J, int K, int t) {
    inside_fixed = 0;
    if constexpr (KMajor) {
      const int k = t / CHUNKS_PER_ROW, j = (t % CHUNKS_PER_ROW) * 4;
      first = size_t(k) * size_t(J) + size_t(j0 + j);
      pass = size_t(ROWS_PER_PASS) * size_t(J);
      k_first = k, k_stride = J;
      if (j0 + j < J) inside_fixed = 1;
      shared_first = k * LD + j;
    } else {
      const int j = t / 8, k = t % 8;
      first = size_t(j0 + j) * size_t(K) + size_t(k);
      pass = size_t(THREADS / 8) * size_t(K);
      k_first = k, k_stride = 1;
#pragma unroll
      for (int p = 0; p < PASSES; ++p)
        if (j0 + j + p * (THREADS / 8) < J) inside_fixed |= 1u << p;
      shared_first = k * LD + j;
    }
  }

  // Issues this thread's copies of the k-tile at k0 into dst; K bounds k.
  // The caller commits the group.
  __device__ __forceinline__ void copy(float* dst, const float* __restrict__ src, int k0, int K) const {
    const size_t at_k = first + size_t(k0) * size_t(k_stride);
    if constexpr (KMajor) {
#pragma unroll
      for (int i = 0; i < COPIES; ++i) {
        const bool inside = inside_fixed != 0 && k_first + k0 + i * ROWS_PER_PASS < K;
        warpnet::ptx::cp_async_cg(dst + shared_first + i * ROWS_PER_PASS * LD, src + (inside ? at_k + i * pass : 0),
                                  inside ? 16 : 0);
      }
    } else {
#pragma unroll
      for (int band = 0; band < BANDS; ++band) {
        const bool k_inside = k_first + k0 + 8 * band < K;
#pragma unroll
        for (int p = 0; p < PASSES; ++p) {
          const bool inside = k_inside && (inside_fixed >> p & 1u);
          warpnet::ptx::cp_async_ca<4>(dst + shared_first + 8 * band * LD + p * (THREADS / 8),
                                       src + (inside ? at_k + p * pass + 8 * band : 0), inside ? 4 : 0);
        }
      }
    }
  }
};

}  // namespace sgemm_copies
