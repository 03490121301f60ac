// SGEMM v10 — autotuned: v9's warptiling kernel, with the tile shape chosen
// per problem from a fixed list of candidates.
//
// Idea: no tile shape is best everywhere. Big tiles reuse each loaded float
//   more (a BM x BN tile reads BM + BN floats per k for BM * BN products) but
//   give few blocks: at 1024x1024, 128x128 tiles are 64 blocks for an H200's
//   132 SMs, and half the chip idles. Small tiles fill the chip and waste
//   bandwidth. v9 made every level of the tiling a template parameter; this
//   version instantiates a few shapes (kCandidates, below) and picks one.
//   When even the smallest tile leaves SMs idle (a small C, a long K), two
//   candidates split K among blocks instead (split-K, below). And for the
//   smallest problems, where time is waiting rather than work, two more run
//   another kernel (small_tile.hpp: a 32x32 tile in 8 warps, 64-deep
//   steps), K whole or split. Two more (added 2026-12-05, not yet timed)
//   keep three of v9's k-tiles in shared memory instead of two. And three
//   (12-14, also 2026-12-05, not yet timed) are v9's kernel with each
//   thread's copies worked out once, before the k-loop
//   (sgemm_hoisted_copies.hpp): v9's loop is 57% FFMA in the SASS, and on
//   the CUDA cores every other instruction takes an FFMA's issue slot
//   (lesson 04, "Counting the loop"); with hoisted copies the k-step of
//   v9's shape is 1024 FFMA in 1193 instructions (86%, NN; 81-89% in the
//   other layouts). They run only where they apply (k-major operands in
//   whole, aligned float4 rows: sgemm_copies::apply); elsewhere Tiles::
//   kernel launches the same tile with v8's stage_tile, so no fallback
//   sits in the hoisted loop (with one beside them it held 1455). Asked
//   for two blocks an SM (MIN_BLOCKS), ptxas (nvcc 13, sm_90a) fits v9's
//   shape in 125-128 registers without spills, as v9 (126-128); unasked it
//   took 147-157 and one block of 8 warps an SM.
// How the choice is made:
//   1. By measurement, on a GPU: device::autotune_matmul(sizes)
//      (src/device/kernels/matmul/autotune.hpp; compiled only into the CUDA
//      copy) times every candidate on the problem with CUDA events, checks
//      each one's output against a CPU dot product (every element at small
//      sizes, sampled ones at large), and
//      caches the winner per sizes (M, N, K and layout). The registered
//      kernel launches the cached winner when there is one. `warpnet bench`
//      tunes each size it times; the device backend tunes each size a
//      training run meets, at its first launch (device::kernels_tuned()).
//   2. Otherwise, from the tuning table (sgemm_v10::table_choice): the largest
//      tile that still gives at least one block per SM of an H200 (132), else
//      the split-K candidate with the most blocks, else the smallest tile. On
//      the emulator (and for untuned sizes) this is the only rule; it is a
//      starting point, not a measurement.
//   Every candidate is checked against the CPU reference on the emulator at
//   awkward sizes and all four layouts (tests/simt/traced/test_matmul_autotune.cpp),
//   so whichever one a GPU picks has been checked.
// Changed from v9: nothing in v9's kernel but its copies' template switch
//   (sgemm_warptiling's HOISTED, off as v9 is registered); the launch picks
//   its instance, and a split-K launch adds a second kernel that sums the
//   slices. The small kernel is the one new kernel. Every candidate keeps its stages (two; three
//   for candidates 10 and 11) in static shared memory under 48 KiB, so each is valid on sm_80, sm_89 and sm_90
//   without opting in to more shared memory.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   3.96 ms = 34.7 TFLOP/s at 4096^3, 68.2% of cuBLAS SGEMM in the same run; 35.0 TFLOP/s at 8192^3, 68.6%.
//   The autotuner picked 128x128x16, warps 64x32 (v09's shape) at both sizes; candidate 2 (128x128x8
//   in 4 warps of 64x64) took 4.06 / 32.3 ms in its tune. At 120x400x256 (A transposed) it picked
//   64x64x16, split K: 0.0116 ms, 81.8% of cuBLAS SGEMM, where v09 took 0.0355 ms (26.8%).
//   2026-11-30, before v9's k loop was unrolled: 63.0%/64.1%.
// Run: build/bin/test_simt -tc="autotune*"; build/bin/warpnet trace matmul/10 --size 128,128,128
#include "kernels/matmul/09_warptiling.cu"
#include "kernels/matmul/small_tile.hpp"  // after 09: it uses sgemm_v8::stage_operands

namespace sgemm_v10 {

// One candidate: sgemm_warptiling's tile parameters (thread tiles 4x4),
// stages, its copies (v8's stage_tile, or HOISTED: sgemm_hoisted_copies.hpp)
// and the blocks an SM is asked to hold (its register cap).
template <int BM_, int BN_, int BK_, int WM_, int WN_, int WMITER_, int WNITER_, int STAGES = 2, bool HOISTED = false,
          int MIN_BLOCKS = 0>
struct Tiles {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, WMITER = WMITER_, WNITER = WNITER_;
  static constexpr int threads = (BM / WM) * (BN / WN) * 32;
  static constexpr int shared_bytes = STAGES * BK * (BM + BN + 8) * 4;  // rows padded by 4 floats
  static constexpr int min_slice_steps = 4;  // split-K: fewer BK-steps per slice spend it filling the pipeline
  // The kernel for C = op(A) @ op(B) (M x N): hoisted copies where they
  // apply (sgemm_copies::apply), else the same tile with v8's stage_tile
  // (for C1Hoisted, C1's own kernel).
  template <bool TA, bool TB>
  static auto kernel(int M, int N, const float* A, const float* B) {
    const bool hoisted = HOISTED && sgemm_copies::apply<TA, TB>(M, N, A, B);
    return hoisted ? sgemm_warptiling<BM, BN, BK, WM, WN, WMITER, WNITER, 4, 4, TA, TB, STAGES, HOISTED, MIN_BLOCKS>
                   : sgemm_warptiling<BM, BN, BK, WM, WN, WMITER, WNITER, 4, 4, TA, TB, STAGES>;
  }
};

// The small-problem kernel (small_tile.hpp) as a candidate: 32x32x64, 256
// threads with 2x2 outputs each. Its steps are 64 deep and few, so a slice
// of two is worth it.
struct Small {
  static constexpr int BM = sgemm_small::BM, BN = sgemm_small::BN, BK = sgemm_small::BK;
  static constexpr int threads = sgemm_small::THREADS;
  static constexpr int shared_bytes = 2 * BK * (BM + BN + 2 * sgemm_small::PAD) * 4;
  static constexpr int min_slice_steps = 2;
  template <bool TA, bool TB>
  static auto kernel(int, int, const float*, const float*) {
    return sgemm_small_tile<TA, TB>;
  }
};

// The candidates: six tiles, largest first (the table's search order), then
// two of them again with K split among blocks (split-K, below). C2 is C1's
// tile as cuBLAS's sm_80 FFMA SGEMM cuts it: 4 warps of 64x64, 128
// accumulators per thread (8 + 16 floats read per 128 multiply-adds, where
// C1 reads 8 + 8 per 64), fewer warps to hide latency with.
//           block (BM x BN x BK)  warp tile   sub-tiles  threads  shared
using C0 = Tiles<256, 128, 8, 64, 64, 2, 4>;    //  4x2 warps 32x16     256  24.5 KiB
using C1 = Tiles<128, 128, 16, 64, 32, 2, 2>;   //  2x4 warps 32x16     256  33.0 KiB (v9)
using C2 = Tiles<128, 128, 8, 64, 64, 2, 4>;    //  2x2 warps 32x16     128  16.5 KiB
using C3 = Tiles<128, 64, 16, 64, 32, 2, 2>;    //  2x2 warps 32x16     128  25.0 KiB
using C4 = Tiles<64, 64, 16, 32, 32, 1, 2>;     //  2x2 warps 32x16     128  17.0 KiB
using C5 = Tiles<32, 32, 32, 32, 32, 1, 2>;     //  1 warp    32x16      32  18.0 KiB
// Candidates 10 and 11 are C0 and C2 with three stages: their k-steps are
// 8 deep, so with two stages a step's copies have one short step of FFMAs
// to land in; a third stage gives them two, for another 12.25 or 8.25 KiB.
using C0Stages3 = Tiles<256, 128, 8, 64, 64, 2, 4, 3>;  //                  256  36.8 KiB
using C2Stages3 = Tiles<128, 128, 8, 64, 64, 2, 4, 3>;  //                  128  24.8 KiB
// Candidates 12-14 are C1 (v9), C2 and C0 with hoisted copies: each thread
// works out its copies once, where v8's stage_tile spends most of v9's
// main loop's non-FFMA instructions (sgemm_hoisted_copies.hpp). C1's
// asks ptxas for two blocks an SM, as v9 has them (sgemm_warptiling's
// MIN_BLOCKS); C2's 4 warps get two unasked, C0's 128 accumulators a
// thread could not fit 128 registers.
using C1Hoisted = Tiles<128, 128, 16, 64, 32, 2, 2, 2, true, 2>;
using C2Hoisted = Tiles<128, 128, 8, 64, 64, 2, 4, 2, true>;
using C0Hoisted = Tiles<256, 128, 8, 64, 64, 2, 4, 2, true>;
constexpr int kTiles = 6;        // candidates 0-5: C0-C5, K whole
constexpr int kWarptiling = 8;   // 6, 7: C4, C5 with K split
constexpr int kCandidates = 15;  // 8, 9: Small, K whole and split; 10, 11: C0, C2 with 3 stages; 12-14 hoisted

// Whether candidate i splits K (when the sizes call for it: split_of).
constexpr bool splits_k(int i) { return i == 6 || i == 7 || i == 9; }

// visit.template operator()<Ci>() for candidate i's tile (0 <= i < kCandidates).
template <class Visit>
auto with_candidate(int i, Visit&& visit) {
  switch (i) {
    case 0: return visit.template operator()<C0>();
    case 1: return visit.template operator()<C1>();
    case 2: return visit.template operator()<C2>();
    case 3: return visit.template operator()<C3>();
    case 4:
    case 6: return visit.template operator()<C4>();
    case 8:
    case 9: return visit.template operator()<Small>();
    case 10: return visit.template operator()<C0Stages3>();
    case 11: return visit.template operator()<C2Stages3>();
    case 12: return visit.template operator()<C1Hoisted>();
    case 13: return visit.template operator()<C2Hoisted>();
    case 14: return visit.template operator()<C0Hoisted>();
    default: return visit.template operator()<C5>();
  }
}

// "256x128x8, warps 64x64": how listings and the autotuner name candidate i.
inline const char* candidate_name(int i) {
  static const char* const names[kCandidates] = {
      "256x128x8, warps 64x64", "128x128x16, warps 64x32", "128x128x8, warps 64x64",
      "128x64x16, warps 64x32", "64x64x16, warps 32x32",   "32x32x32, one warp",
      "64x64x16, split K",      "32x32x32, one warp, split K", "32x32x64, 256 threads",
      "32x32x64, 256 threads, split K", "256x128x8, warps 64x64, 3 stages", "128x128x8, warps 64x64, 3 stages",
      "128x128x16, warps 64x32, hoisted copies", "128x128x8, warps 64x64, hoisted copies",
      "256x128x8, warps 64x64, hoisted copies"};
  return names[i < 0 || i >= kCandidates ? kCandidates - 1 : i];
}

constexpr int kSMs = 132;  // an H200's

// Split-K. A small C with a long K — a fully connected layer's weight
// gradient, where K is the batch, or its forward pass at a small batch — gives
// a few blocks, each walking all of K while most SMs idle: LeNet-5's fc1 at
// batch 256, 256x120x400, is 8 blocks of 64x64 or 32 of 32x32. Candidates 6
// and 7 cut K into S slices, one per z of the grid (sgemm_warptiling's split,
// v9), into S partial C's that a second kernel adds up (sum_splits,
// kernels/common) in a fixed order, so the sum is the same on every run. S is enough slices for a block per SM,
// but each slice keeps at least T::min_slice_steps BK-steps (4 for v9's
// tiles: fewer spend the slice filling the pipeline; 2 for Small's 64-deep
// steps), and no slice is empty. 1 for the candidates that keep K whole or
// when K is short. Candidate 9 is Small split the same way.
inline int split_of(int i, int M, int N, int K) {
  if (!splits_k(i)) return 1;
  return with_candidate(i, [&]<class T>() {
    using ::warpnet::ceil_div;
    const int blocks = ceil_div(M, T::BM) * ceil_div(N, T::BN);
    const int for_sms = ceil_div(kSMs, blocks), for_depth = K / (T::min_slice_steps * T::BK);
    const int wanted = for_sms < for_depth ? for_sms : for_depth;
    if (wanted <= 1) return 1;
    const int slice = ceil_div(ceil_div(K, wanted), T::BK) * T::BK;  // as the kernel cuts K
    return ceil_div(K, slice);
  });
}

// Candidate i's blocks at M x N x K: its tile grid times its slices.
inline int blocks_of(int i, int M, int N, int K) {
  return with_candidate(i, [&]<class T>() { return ::warpnet::ceil_div(M, T::BM) * ::warpnet::ceil_div(N, T::BN); }) *
         split_of(i, M, N, K);
}

// The tuning table's rule: the first (largest) tile whose grid has at least
// kSMs blocks, so every SM of an H200 gets work; else the split-K candidate
// that gives the most blocks, if it gives more than the smallest tile alone;
// else the smallest tile. Among v9's tiles only: Small is for the tuner to
// weigh on a GPU, a latency question no count of blocks answers.
inline int table_choice(int M, int N, int K) {
  for (int i = 0; i < kTiles; ++i)
    if (blocks_of(i, M, N, K) >= kSMs) return i;
  int best = kTiles - 1;
  for (int i = kTiles; i < kWarptiling; ++i)
    if (blocks_of(i, M, N, K) > blocks_of(best, M, N, K)) best = i;
  return best;
}

}  // namespace sgemm_v10
