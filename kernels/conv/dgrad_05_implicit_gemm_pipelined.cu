// Conv dgrad v5 — the data gradient's implicit GEMM on matmul v9's
// machinery, as conv v9 does the forward: cp.async double buffering, warp
// tiles, the k-steps unrolled. dgrad v4's kernels remain for the layers it
// does not fit.
//
// Idea: dgrad v3 (the tap table, at stride 1) still loads like matmul v5:
//   gathers through registers, two barriers per k-step, nothing in flight
//   while a tile is multiplied. Here the kernel is conv v9's
//   (kernels/conv/pipelined_gemm.hpp) with the data gradient's pass:
//     dX (N·H·W, C) = A (N·H·W, K·R·S) @ B (K·R·S, C)
//     A[m][krs] = dy[n, k, h + pad − r·dil, w + pad − s·dil]   (0 outside dy; m = (n, h, w))
//     B[krs][c] = w[k, c, r, s]
//   Each A element is a 4-byte cp.async from dy, its tap from dgrad v3's
//   table and zero-filled where no output pixel reaches the input pixel; each
//   B element a 4-byte cp.async from w at the row the table keeps for the
//   tap (w[k, c, r, s] = w[wrow + c·R·S]), zero past C or past K·R·S. A
//   table entry is both (16 bytes), so the table holds 1152 taps (18 KiB):
//   issue 5's deepest layer (K·R·S = 2304) walks it in two chunks, one more
//   barrier. dx is stored as float4s where H·W is a multiple of 4.
// Applies: stride 1 (at stride 2 three taps in four reach no output pixel;
//   dgrad v3's header says how cuDNN avoids that); the registration runs
//   dgrad v4's candidates otherwise, and times all kinds on a GPU.
// Tiles: conv v9's four (128x128x8 in 8 warps of 64x32 or 4 of 64x64,
//   128x64x8 in 4 of 64x32, 256x64x8 in 8 of 64x32). The table's rule (no GPU): dgrad v4's direct
//   kernel where it applies (C <= 8); else at stride 1 the first pipelined
//   tile giving every SM of an H200 a block; else dgrad v4's table.
// Changed from dgrad v3: cp.async gathers (both tiles) into two stages
//   instead of register gathers into one; matmul v9's warp-tiled, unrolled
//   multiply; float4 stores of dx.
// Trace (emulator, `warpnet trace conv2d_dgrad/05 --size 2,32,98,98,8,3,3,1,1,1`
//   and /03, where the table takes a pipelined tile, 151 blocks of 128x128 in
//   8 warps, against v3's 301 of 64x32x16): memory instructions 1208 warps x
//   468 against 2408 x 574 (2.4x fewer in all); shared loads 402,264 against
//   1,216,040; global bytes asked 9.3e6 against 1.07e7; dx as float4s, 88.9%
//   efficient (v3 80%). The table's build stores its 16-byte entries a member
//   at a time, 2.94-way, once per block and chunk (16,761 of 103,737 shared
//   stores).
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-run2.json, `warpnet bench conv2d_dgrad`),
//   N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14: 0.464 / 0.438 / 0.458 ms,
//   31.9 / 33.8 / 32.3 TFLOP/s, 54.9% / 48.0% / 39.4% of cuDNN in the same run (its fastest fp32 algorithm by cudnnFind:
//   FFT or Winograd there).
// Run: build/bin/test_simt -tc="conv dgrad pipelined*"; build/bin/warpnet trace conv2d_dgrad/05 --size 2,32,98,98,8,3,3,1,1,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/ptx.hpp"
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/dgrad_04_direct_few_channels.cu"  // dgrad v4's candidates (it includes v3, v2)
#include "kernels/conv/pipelined_gemm.hpp"
#include "kernels/conv/tap_table.hpp"

namespace conv_dgrad_v05 {
using namespace conv_taps;  // Tap, its fields and the table's constants

// The data gradient as implicit_gemm_pipelined's pass (pipelined_gemm.hpp):
// dy: (N,K,P,Q), w: (K,C,R,S), dx: (N,C,H,W), NCHW row-major (ConvShape).
// Preconditions: stride 1; H + pad, W + pad <= kNoTap; dil·(R−1), dil·(S−1) < kNoTap.
struct DgradTaps {
  struct Entry {
    Tap tap;   // {k·P·Q − r·dil·Q − s·dil, r·dil, s·dil}: dgrad v3's view of tap (k, r, s) from hp·Q + wp
    int wrow;  // w[k, 0, r, s]'s index, −1 past K·R·S
    int unused;
  };
  static constexpr int kTableTaps = 1152;  // 18 KiB
  struct Row {
    int hp, wp, hwp;     // input pixel (h, w) as hp = h + pad, wp = w + pad, hp·Q + wp
    const float* image;  // dy + n·K·P·Q, (K,P,Q)
  };
  __device__ static int taps(const ConvShape& g) { return g.K * g.R * g.S; }
  __device__ static int rows(const ConvShape& g) { return g.N * g.H * g.W; }
  __device__ static int cols(const ConvShape& g) { return g.C; }
  __device__ static int plane(const ConvShape& g) { return g.H * g.W; }
  __device__ static Entry entry(const ConvShape& g, int krs) {
    if (krs >= taps(g)) return Entry{make_tap(0, kNoTap, 0), -1, 0};  // under no output: gathers zeros
    const int RS = g.R * g.S, k = krs / RS, rs = krs % RS, dh = rs / g.S * g.dil, dw = rs % g.S * g.dil;
    return Entry{make_tap(k * g.P * g.Q - dh * g.Q - dw, dh, dw), k * g.C * RS + rs, 0};
  }
  __device__ static Row row(const ConvShape& g, int m, const float* dy) {
    const int HW = g.H * g.W;
    if (m >= g.N * HW) return Row{kOutsideRow, 0, 0, dy};  // past M: every bounds test fails
    const int hw = m % HW, hp = hw / g.W + g.pad, wp = hw % g.W + g.pad;
    return Row{hp, wp, hp * g.Q + wp, dy + size_t(m / HW) * g.K * g.P * g.Q};
  }
  // dy[n, k, hp − r·dil, wp − s·dil] at stride 1, when that output pixel exists.
  __device__ static const float* element(const ConvShape& g, const Row& row, const Entry& e, const float*, bool& in) {
    const int p = row.hp - tap_dh(e.tap), q = row.wp - tap_dw(e.tap);
    in = unsigned(p) < unsigned(g.P) && unsigned(q) < unsigned(g.Q);
    return row.image + row.hwp + tap_offset(e.tap);
  }
  // B[k0 + kk][n0 + nn] = w[wrow + c·R·S]: a warp takes BK taps of 32/BK
  // channels, stores BN + 4 floats apart per tap: 32 banks.
  template <int BK, int BN, int LD, int THREADS>
  __device__ static void stage_b(float* dst, const Entry* table, const float* w, const ConvShape& g, int n0, int,
                                 int t) {
    static_assert(THREADS % BK == 0 && BN % (THREADS / BK) == 0, "whole rows of taps per pass");
    const int kk = t % BK, wrow = table[kk].wrow, RS = g.R * g.S;
#pragma unroll
    for (int i = 0; i < BN / (THREADS / BK); ++i) {
      const int nn = t / BK + i * (THREADS / BK), c = n0 + nn;
      const bool in = wrow >= 0 && c < g.C;
      ::warpnet::ptx::cp_async_ca<4>(dst + kk * LD + nn, in ? w + wrow + size_t(c) * RS : w, in ? 4 : 0);
    }
  }
};

// The pipelined tiles (pipelined_gemm.hpp), then dgrad v4's candidates (its direct kernel, dgrad v3's tiles).
constexpr int kPipelined = conv_pipelined::kTiles;
constexpr int kCandidates = kPipelined + conv_dgrad_v04::kCandidates;

// visit.template operator()<T>() for pipelined tile i (0 <= i < kPipelined).
template <class Visit>
auto with_pipelined(int i, Visit&& visit) {
  return conv_pipelined::with_tile<DgradTaps>(i, visit);
}

inline const char* candidate_name(int i) {
  return i < kPipelined ? conv_pipelined::tile_name(i) : conv_dgrad_v04::candidate_name(i - kPipelined);
}

// Whether candidate i can run this problem: the pipelined tiles at stride 1.
inline bool candidate_applies(int i, const ConvShape& g) {
  return i < kPipelined ? g.stride == 1 && table_fits(g) : conv_dgrad_v04::candidate_applies(i - kPipelined, g);
}

// The tuning table: dgrad v4's direct kernel where it applies; else, at
// stride 1 where a tap table fits, the first pipelined tile giving at least
// one block per SM of an H200; else dgrad v4's table.
inline int table_choice(const ConvShape& g) {
  if (conv_dgrad_v04::candidate_applies(0, g)) return kPipelined;
  const int tile = g.stride == 1 && table_fits(g) ? conv_pipelined::first_filling_tile(g.N * g.H * g.W, g.C) : -1;
  return tile >= 0 ? tile : kPipelined + conv_dgrad_v04::table_choice(g);
}

}  // namespace conv_dgrad_v05
