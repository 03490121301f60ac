// The tile candidates of the autotuned tap-table versions (conv v7, dgrad
// v3): one list, one set of names, one tuning-table rule. Each version
// instantiates its own Tiles<BM, BN, BK, TM, TN> (its kernel, its shared
// memory) at every shape here.
#pragma once
#include "kernels/common/cuda_compat.hpp"

namespace conv_tap_tiles {

constexpr int kCandidates = 7;

// visit.template operator()<Tiles<...>>() for candidate i (0 <= i < kCandidates).
// Widest BN first and at each width the largest BM first (the table's search
// order). Deeper steps for the narrow tiles: their blocks have few threads
// per tap, and fewer steps mean fewer barriers (dgrad v2's finding at
// LeNet-5's conv2).
template <template <int, int, int, int, int> class Tiles, class Visit>
auto with_candidate(int i, Visit&& visit) {
  switch (i) {  //                                         BM x BN x BK  per thread  threads
    case 0: return visit.template operator()<Tiles<128, 64, 8, 8, 4>>();   // 8x4   256 (conv v4's, dgrad v2's)
    case 1: return visit.template operator()<Tiles<64, 64, 16, 4, 4>>();   // 4x4   256
    case 2: return visit.template operator()<Tiles<64, 32, 16, 4, 2>>();   // 4x2   256
    case 3: return visit.template operator()<Tiles<64, 16, 32, 2, 1>>();   // 2x1   512
    case 4: return visit.template operator()<Tiles<32, 16, 32, 1, 1>>();   // 1x1   512
    case 5: return visit.template operator()<Tiles<64, 8, 32, 2, 1>>();    // 2x1   256
    default: return visit.template operator()<Tiles<32, 8, 32, 1, 1>>();   // 1x1   256 (dgrad v2's narrow tile)
  }
}

// "128x64x8, 8x4 per thread": how listings and the autotuners name candidate i.
inline const char* candidate_name(int i) {
  static const char* const names[kCandidates] = {
      "128x64x8, 8x4 per thread", "64x64x16, 4x4 per thread", "64x32x16, 4x2 per thread",
      "64x16x32, 2x1 per thread", "32x16x32, 1x1 per thread", "64x8x32, 2x1 per thread",
      "32x8x32, 1x1 per thread"};
  return names[i < 0 || i >= kCandidates ? kCandidates - 1 : i];
}

// The tuning table's rule, a starting point and not a measurement, for a
// GEMM of `rows` x `cols` (conv: N·P·Q output pixels x K; dgrad: N·H·W
// input pixels x C): among the candidates of the narrowest BN that still
// covers cols (the widest BN when none does: the columns are then split over
// blocks, each gathering A again), the first (largest BM) whose grid has at
// least kSMs blocks, so every SM of an H200 gets work; else that width's
// smallest.
constexpr int kSMs = 132;
template <template <int, int, int, int, int> class Tiles>
int table_choice(int rows, int cols) {
  const auto bn = [](int i) { return with_candidate<Tiles>(i, []<class T>() { return T::BN; }); };
  int width = bn(0);
  for (int i = 0; i < kCandidates; ++i)
    if (bn(i) >= cols && bn(i) < width) width = bn(i);
  int last = 0;
  for (int i = 0; i < kCandidates; ++i) {
    if (bn(i) != width) continue;
    const int blocks = with_candidate<Tiles>(
        i, [&]<class T>() { return ::warpnet::ceil_div(rows, T::BM) * ::warpnet::ceil_div(cols, T::BN); });
    if (blocks >= kSMs) return i;
    last = i;
  }
  return last;
}

}  // namespace conv_tap_tiles
