// GEMM v24 — mma.sync autotuned: the kernels of v12, v17 and v23 in fifteen
// configurations, the one this GPU runs fastest chosen per problem. bf16
// inputs, fp32 accumulation.
//
// Idea: v10 did this for the FFMA rungs. On the 2026-12-04 H200 run v17's
//   bigger tile and deeper ring came out slower than v12 (212 against 248
//   TFLOP/s at 4096^3, nvidia-h200-2026-12-04.json), though each k16 of its warps issues 32 mma.sync for
//   8 ldmatrix where v12's issue 16 for 6. A likely reason: one block of 8
//   warps fills an SM, so at its __syncthreads every k-step the whole SM
//   waits for its slowest warp, with no other block to run meanwhile.
//   Ampere-class libraries cut the same 64x64 warp tiles into 128x128 blocks
//   of 4 warps, two blocks to an SM: while one waits at its barrier the
//   other computes; they pipeline the fragments as v23 does; and their
//   copies work out each thread's addresses once (hoisted_copies.hpp), where
//   v17's spend some 260 instructions a k-step per thread beside 64
//   mma.sync. Which is faster on Hopper, with how many stages, is a
//   measurement, so the candidates are:
//     0  128x128, 8 warps of 64x32, 2 stages   v12 itself (two barriers a k-step)
//     1  128x128, 4 warps of 64x64, 2 stages   v12's kernel, 2-3 blocks an SM (164-165 registers)
//     2  128x128, 4 warps of 64x64, 2 stages   v17's kernel (one barrier a k-step, grouped order)
//     3  128x128, 4 warps of 64x64, 3 stages   v17's
//     4  128x128, 4 warps of 64x64, 4 stages   v17's
//     5  128x256, 8 warps of 64x64, 3 stages   v17's
//     6  128x256, 8 warps of 64x64, 4 stages   v17 itself
//     7  128x128, 4 warps of 64x64, 3 stages   v17's kernel, hoisted copies
//     8  128x128, 4 warps of 64x64, 4 stages   v17's kernel, hoisted copies
//     9  128x256, 8 warps of 64x64, 4 stages   v17's kernel, hoisted copies
//    10  128x128, 4 warps of 64x64, 3 stages   v23's kernel (fragments one slice ahead, hoisted copies)
//    11  128x128, 4 warps of 64x64, 4 stages   v23's
//    12  128x256, 8 warps of 64x64, 3 stages   v23's
//    13  128x256, 8 warps of 64x64, 4 stages   v23 itself
//    14  64x64, 4 warps of 32x32, 2 stages     v12's kernel, for small C
//   Beside each other in the tune's times: 6 against 9 is what the copies'
//   arithmetic costs, 9 against 13 what pipelining the fragments gains.
//   The hoisted copies take only rows of whole 16-byte chunks; where a
//   problem's are not, candidates 7-13 launch their block with stage_tile's
//   copies (7 is then 3, 8 is 4, 9 is 6; 10-13 v23's kernel so copied).
// How the choice is made: as v10's. On a GPU the registration's tune (Kernel::
//   tune; `warpnet bench` calls it for every size it times) times every
//   candidate with CUDA events, checks each one against a CPU dot product
//   (every element at small sizes, sampled ones at large;
//   src/device/kernels/matmul/matmul_tune.hpp), and
//   launches the fastest from then on. Otherwise the table (table_choice):
//   v12's own tile when it gives at least one block per SM of an H200 — it
//   was the faster of the two measured — else the small tile.
// Shared memory: candidates 0, 1 and 14 use v12's static tiles (34-40 KiB
//   for 128x128, 18-20 KiB for 64x64, by layout); the others v17's dynamic
//   ring, 34-40 KiB (2 stages of 128x128) to 100-120 KiB (4 stages of
//   128x256). Two 4-stage 128x128 blocks take 148-160 KiB of an SM's 228.
// Registers (nvcc 13.0, sm_90a; bench/results/ptxas-sm90a-2026-12-07.txt):
//   v17's kernel 194-197 in every configuration, 212-218 with hoisted
//   copies, v23's 238-252 (208-216 with stage_tile's), v12's in 4 warps of
//   64x64 164-165, in 8 warps of 64x32 91-94, at 64x64 56-62; no spills. Two 4-warp blocks an SM fit
//   up to 256 registers a thread.
// Every candidate is checked against the CPU reference on the emulator at
//   awkward sizes and all four layouts (tests/simt/traced/test_mma_sync_autotune.cpp).
// Changed from v23: nothing in the kernels (v17's and v23's tiles and
//   copies are template parameters, mma_sync_v17::Tiles); the launch picks
//   its instance.
// Measured: not yet on a GPU (written on 2026-12-05; the next lent H200's
//   `gpu-check.sh` tunes and times it beside v12, v17 and v23).
// Run: build/bin/test_simt -tc="mma_sync autotune*"; build/bin/warpnet trace matmul/24 --size 127,129,65;
//   build/bin/warpnet bench matmul --size 4096,4096,4096 --kernels matmul/12,matmul/17,matmul/23,matmul/24 on a GPU.
#include "kernels/matmul/23_mma_sync_pipelined.cu"  // includes 17 and 12

namespace mma_sync_v24 {

// A candidate on v12's kernel: a BM x BN block of (BM/WM) x (BN/WN) warps,
// two stages in static shared memory, a 2-D grid (column tiles in x).
template <int BM_, int BN_, int WM, int WN>
struct V12Tile {
  static constexpr int BM = BM_, BN = BN_, THREADS = (BM / WM) * (BN / WN) * 32;
  template <bool TA, bool TB>
  static constexpr size_t dynamic_shared() {
    return 0;
  }
  static dim3 grid(int M, int N) { return dim3(warpnet::ceil_div(N, BN), warpnet::ceil_div(M, BM)); }
  template <bool TA, bool TB>
  static void launch(int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* B, float* C) {
    warpnet::launch_kernel(gemm_mma_sync<BM, BN, 32, WM, WN, TA, TB>, grid(M, N), dim3(THREADS), 0, M, N, K, A, B, C);
  }
};

// A candidate on v17's kernel, or v23's when PIPELINED: 128 x BN_ blocks of
// 64x64 warps, a ring of STAGES in dynamic shared memory, a 1-D grid in
// grouped tile order; copies by v12's stage_tile, or HOISTED (hoisted_copies.hpp).
template <int BN_, int STAGES, bool PIPELINED, bool HOISTED>
struct RingTile {
  using Tiles = mma_sync_v17::Tiles<BN_, STAGES, HOISTED>;
  static constexpr int BM = mma_sync_v17::BM, BN = BN_, THREADS = Tiles::THREADS;
  template <bool TA, bool TB>
  static constexpr size_t dynamic_shared() {
    return Tiles::template shared_bytes<TA, TB>();
  }
  static dim3 grid(int M, int N) { return mma_sync_v17::grid(M, N, BN); }
  template <bool TA, bool TB>
  static void launch(int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* B, float* C) {
    if constexpr (PIPELINED) mma_sync_v23::launch<Tiles, TA, TB>(M, N, K, A, B, C);
    else mma_sync_v17::launch<Tiles, TA, TB>(M, N, K, A, B, C);
  }
};
template <int BN, int STAGES>
using V17Tile = RingTile<BN, STAGES, false, false>;
template <int BN, int STAGES>
using V17HoistedTile = RingTile<BN, STAGES, false, true>;
template <int BN, int STAGES>
using V23Tile = RingTile<BN, STAGES, true, true>;

constexpr int kCandidates = 15;
constexpr int kV12 = 0, kSmall = 14;  // the table's two choices

// visit.template operator()<Candidate>() for candidate i (0 <= i < kCandidates).
template <class Visit>
auto with_candidate(int i, Visit&& visit) {
  switch (i) {
    case 0: return visit.template operator()<V12Tile<128, 128, 64, 32>>();
    case 1: return visit.template operator()<V12Tile<128, 128, 64, 64>>();
    case 2: return visit.template operator()<V17Tile<128, 2>>();
    case 3: return visit.template operator()<V17Tile<128, 3>>();
    case 4: return visit.template operator()<V17Tile<128, 4>>();
    case 5: return visit.template operator()<V17Tile<256, 3>>();
    case 6: return visit.template operator()<V17Tile<256, 4>>();
    case 7: return visit.template operator()<V17HoistedTile<128, 3>>();
    case 8: return visit.template operator()<V17HoistedTile<128, 4>>();
    case 9: return visit.template operator()<V17HoistedTile<256, 4>>();
    case 10: return visit.template operator()<V23Tile<128, 3>>();
    case 11: return visit.template operator()<V23Tile<128, 4>>();
    case 12: return visit.template operator()<V23Tile<256, 3>>();
    case 13: return visit.template operator()<V23Tile<256, 4>>();
    default: return visit.template operator()<V12Tile<64, 64, 32, 32>>();
  }
}

// How listings and the tuner name candidate i.
inline const char* candidate_name(int i) {
  static const char* const names[kCandidates] = {
      "128x128, 8 warps of 64x32, 2 stages (v12)", "128x128, 4 warps of 64x64, 2 stages (v12's kernel)",
      "128x128, 4 warps, 2-stage ring",            "128x128, 4 warps, 3-stage ring",
      "128x128, 4 warps, 4-stage ring",            "128x256, 8 warps, 3-stage ring",
      "128x256, 8 warps, 4-stage ring (v17)",      "128x128, 4 warps, 3-stage ring, hoisted copies",
      "128x128, 4 warps, 4-stage ring, hoisted copies", "128x256, 8 warps, 4-stage ring, hoisted copies",
      "128x128, 4 warps, 3-stage ring, hoisted, pipelined", "128x128, 4 warps, 4-stage ring, hoisted, pipelined",
      "128x256, 8 warps, 3-stage ring, hoisted, pipelined", "128x256, 8 warps, 4-stage ring, hoisted, pipelined (v23)",
      "64x64, 4 warps of 32x32, 2 stages"};
  return names[i < 0 || i >= kCandidates ? kCandidates - 1 : i];
}

constexpr int kSMs = 132;  // an H200's

// Without a measurement: v12's tile when its grid gives every SM a block, else the small tile.
inline int table_choice(int M, int N) {
  return warpnet::ceil_div(M, 128) * warpnet::ceil_div(N, 128) >= kSMs ? kV12 : kSmall;
}

// Candidate i's launch for the layout (TA, TB): C = op(A) @ op(B), shapes as v12's.
template <bool TA, bool TB>
void launch(int i, int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* B, float* C) {
  with_candidate(i, [&]<class T>() { T::template launch<TA, TB>(M, N, K, A, B, C); });
}

}  // namespace mma_sync_v24
