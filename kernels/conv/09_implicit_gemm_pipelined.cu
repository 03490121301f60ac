// Conv v9 — the implicit GEMM on matmul v9's machinery: cp.async double
// buffering, warp tiles, the k-steps unrolled; v8's kernels remain for the
// layers it does not fit.
//
// Idea: v4 and v7 gather A (the virtual im2col matrix) through registers,
//   with two barriers per k-step and nothing in flight while the tile is
//   multiplied — matmul v5's pattern, which matmul left behind at v8. Here
//   the gather is a 4-byte cp.async per element straight into the k-major
//   A tile, zero-filled (src-size 0) where the tap falls in the padding, past
//   M or past C·R·S: no branch around a copy, no register round trip. The
//   filters, w (K, C·R·S) row-major, are op(B) of matmul's "B transposed"
//   layout and go through matmul v8's stage_tile (4-byte copies landing
//   transposed, 32 banks per warp). Two stages: the copies of step k+1 fly
//   while step k is multiplied by matmul v9's warp tiles (multiply_stage:
//   float4 reads of both tiles, the BK k-steps unrolled), one barrier per
//   step. The tap of each gathered element comes from v7's table in shared
//   memory (one broadcast read, two adds, two unsigned compares), rebuilt
//   per chunk of kTableTaps taps, with one more barrier, for reductions
//   longer than a chunk. The kernel is pipelined_gemm.hpp's, shared with
//   dgrad v5; this file gives it the forward's pass (ForwardTaps).
// Tiles: four, for layers with many output channels (issue 5's 3x3 ResNet
//   layers: K = 64 to 256, N·P·Q = 12,544 to 200,704): 128x128 in 8 warps of
//   64x32 (matmul v10's C1 cut) or 4 warps of 64x64 (its C2, cuBLAS's),
//   128x64 in 4 warps of 64x32, and 256x64 in 8 warps of 64x32 (added after
//   the 56x56 layer's 72.5% of cuDNN's implicit GEMM: not yet timed);
//   BK = 8 keeps two stages (12.5-20.5 KiB) and an
//   18 KiB table in 48 KiB of static shared memory (ptxas: 30.5-38.5 KiB in
//   all; bench/results/ptxas-sm90a-2026-12-07.txt). Then 128x64 and 256x64
//   again with B's copies hoisted (2026-12-05, not yet timed): stage_tile
//   works each 4-byte copy of w out from its index every k-step, in a loop
//   beside the k-step's 512 FFMA; sgemm_copies::OperandCopies (matmul v10's
//   hoisted candidates) works them out once per thread. In the SASS (nvcc
//   13.0, sm_90a; scripts/sass-loops.py) their main loops hold 1313 and 1300
//   instructions (the table's rebuild and edge paths included) against 1504
//   and 1522, and the 256x64 tile fits its 128 registers without the 40
//   bytes of spills of the unhoisted one. v8's candidates —
//   its direct kernel for K <= 16 and v7's seven tiles — follow them, and on
//   a GPU Kernel::tune times every one that applies.
// The table's rule (no GPU): v8's direct kernel where it applies; else the
//   first pipelined tile that gives every SM of an H200 a block (128x128 in
//   8 warps at all three ResNet layers); else v8's table.
// Changed from v7: cp.async gathers into two stages instead of register
//   gathers into one; matmul v9's warp-tiled, unrolled multiply instead of
//   v7's scalar-read thread tiles; BK 8 with padded k-major rows for both
//   tiles; y stored as float4s where P·Q is a multiple of 4.
// Trace (emulator, `warpnet trace conv2d/09 --size 2,8,98,98,32,3,3,1,1,1` and
//   conv2d/07; the smallest layer here where the table takes a pipelined tile,
//   151 blocks of 128x128 in 8 warps, against v7's 301 of 64x32x16): memory
//   instructions 1208 warps x 454 against 2408 x 568 (2.5x fewer in all);
//   shared loads 391,392 against 1,204,000 (float4s, 1.00-way); global bytes
//   asked 9.3e6 against 1.07e7; y stored as float4s, 88.9% efficient.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-cnn.json, `warpnet bench conv2d`),
//   N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14: 0.517 / 0.498 / 0.516 ms,
//   28.6 / 29.7 / 28.7 TFLOP/s, 44.0% / 39.2% / 46.8% of cuDNN (fp32, no TF32) in the same run;
//   the tuner picked the pipelined 128x64 / 128x128 (8 warps) / 128x64, warps 64x32.
// Run: build/bin/test_simt -tc="conv pipelined*"; build/bin/warpnet trace conv2d/09 --size 2,8,98,98,32,3,3,1,1,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/08_direct_few_channels.cu"  // v8's candidates (it includes v7)
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/pipelined_gemm.hpp"
#include "kernels/conv/tap_table.hpp"

namespace conv_v09 {
using namespace conv_taps;  // Tap, its fields and the table's constants

// The forward as implicit_gemm_pipelined's pass (pipelined_gemm.hpp):
// x: (N,C,H,W), w: (K,C,R,S), y: (N,K,P,Q), NCHW row-major (ConvShape);
// Y (N·P·Q, K) = A (N·P·Q, C·R·S) @ w^T, A gathered from x through v7's taps.
// Preconditions: H + pad, W + pad <= kNoTap; dil·(R−1), dil·(S−1) < kNoTap.
struct ForwardTaps {
  using Entry = Tap;
  using Row = ForwardRow;
  static constexpr int kTableTaps = conv_taps::kTableTaps;  // 18 KiB
  __device__ static int taps(const ConvShape& g) { return g.crs(); }
  __device__ static int rows(const ConvShape& g) { return g.gemm_m(); }
  __device__ static int cols(const ConvShape& g) { return g.K; }
  __device__ static int plane(const ConvShape& g) { return g.P * g.Q; }
  __device__ static Tap entry(const ConvShape& g, int crs) { return x_tap<Tap>(g, crs); }
  __device__ static Row row(const ConvShape& g, int m, const float* x) { return forward_row(g, m, x); }
  __device__ static const float* element(const ConvShape& g, const Row& row, const Tap& tap, const float*, bool& in) {
    const int ih = row.h0 + tap_dh(tap), iw = row.w0 + tap_dw(tap);
    in = unsigned(ih) < unsigned(g.H) && unsigned(iw) < unsigned(g.W);
    return row.image + row.hw0 + tap_offset(tap);
  }
  // w (K, C·R·S) row-major is matmul's "B transposed": v8's transposing copies.
  template <int BK, int BN, int LD, int THREADS>
  __device__ static void stage_b(float* dst, const Tap*, const float* w, const ConvShape& g, int n0, int k0, int t) {
    sgemm_v8::stage_tile<BK, BN, LD, THREADS, false>(dst, w, n0, k0, g.K, g.crs(), t, false);
  }
  // The same copies with each thread's part worked out once, before the
  // k-loop (matmul v10's hoisted candidates' sgemm_copies::OperandCopies):
  // candidates 4 and 5.
  template <int BK, int BN, int LD, int THREADS>
  struct HoistedB {
    sgemm_copies::OperandCopies<BK, BN, LD, THREADS, false> copies;
    int taps;
    __device__ void copy(float* dst, const float* w, int k0) const { copies.copy(dst, w, k0, taps); }
  };
  template <int BK, int BN, int LD, int THREADS>
  __device__ static HoistedB<BK, BN, LD, THREADS> hoisted_b(const ConvShape& g, int n0, int t) {
    return {sgemm_copies::OperandCopies<BK, BN, LD, THREADS, false>(n0, g.K, g.crs(), t), g.crs()};
  }
};

}  // namespace conv_v09

namespace conv_v09 {

// The pipelined tiles (pipelined_gemm.hpp), two of them again with B's
// copies hoisted (4, 5: the tiles for 64 output channels, where v9 ran
// furthest below cuDNN's implicit GEMM on 2026-12-04), then v8's candidates
// (its direct kernel, v7's tiles).
constexpr int kPipelined = conv_pipelined::kTiles + 2;
constexpr int kCandidates = kPipelined + conv_v08::kCandidates;

// visit.template operator()<T>() for pipelined tile i (0 <= i < kPipelined).
template <class Visit>
auto with_pipelined(int i, Visit&& visit) {
  using conv_pipelined::Tiles;
  if (i == conv_pipelined::kTiles) return visit.template operator()<Tiles<ForwardTaps, 128, 64, 64, 32, 2, 2, true>>();
  if (i == conv_pipelined::kTiles + 1)
    return visit.template operator()<Tiles<ForwardTaps, 256, 64, 64, 32, 2, 2, true>>();
  return conv_pipelined::with_tile<ForwardTaps>(i, visit);
}

inline const char* candidate_name(int i) {
  if (i == conv_pipelined::kTiles) return "pipelined 128x64x8, warps 64x32, B's copies hoisted";
  if (i == conv_pipelined::kTiles + 1) return "pipelined 256x64x8, warps 64x32, B's copies hoisted";
  return i < kPipelined ? conv_pipelined::tile_name(i) : conv_v08::candidate_name(i - kPipelined);
}

// Whether candidate i can run this problem: the pipelined tiles where a tap
// table can describe it (table_fits), v7's tiles anything.
inline bool candidate_applies(int i, const ConvShape& g) {
  return i < kPipelined ? table_fits(g) : conv_v08::candidate_applies(i - kPipelined, g);
}

// The tuning table: v8's direct kernel where it applies; else the first
// pipelined tile giving at least one block per SM of an H200; else (or where
// no tap table fits) v8's table.
inline int table_choice(const ConvShape& g) {
  if (conv_v08::candidate_applies(0, g)) return kPipelined;
  if (!table_fits(g)) return kPipelined + conv_v08::table_choice(g);
  const int tile = conv_pipelined::first_filling_tile(g.gemm_m(), g.K);
  return tile >= 0 ? tile : kPipelined + conv_v08::table_choice(g);
}

}  // namespace conv_v09
