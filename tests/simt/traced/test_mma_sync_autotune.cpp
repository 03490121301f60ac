// Every candidate of matmul/24_mma_sync_autotuned (the kernels of v12, v17
// and v23 in fifteen configurations, with v12's copies or the hoisted ones) against a CPU reference, at awkward sizes
// and all four layouts. The registry test checks only the candidate the table
// picks at each test size; on a GPU the tune may pick any of them. Traced
// (see ../../CMakeLists.txt): the checker also fails a launch on any
// out-of-bounds access, shared-memory race (a stage refilled while a warp
// still reads it: the 2-stage ring has one barrier a k-step, v23's its
// barrier between two slices) or uninitialized shared read.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/common/all.hpp"  // before the kernel files (see there)
#include "tests/simt/traced/candidate_check.hpp"

namespace {
#include "kernels/matmul/24_mma_sync_autotuned.cu"
}  // namespace

namespace {

using candidate_check::kSeed;

// n values uniform in [-1, 1), rounded to bf16: `stored` for the device,
// `value` the same numbers as floats for the reference.
struct Bf16Operand {
  std::vector<__nv_bfloat16> stored;
  std::vector<float> value;
  Bf16Operand(size_t n, uint64_t& state) {
    for (const float x : candidate_check::uniform(n, state)) {
      stored.push_back(__nv_bfloat16(x));
      value.push_back(float(stored.back()));
    }
  }
};

// C = op(A) @ op(B) in double, and each element's bound: the products of
// bf16 values are exact in fp32, so the sums alone err, an fp32 K-term sum
// by at most about K * 2^-23 * sum |a*b| in any order (the registry's matmul bound).
void reference(int M, int N, int K, bool ta, bool tb, const std::vector<float>& a, const std::vector<float>& b,
               std::vector<double>& want, std::vector<double>& bound) {
  want.assign(size_t(M) * N, 0.0);
  bound.assign(size_t(M) * N, 0.0);
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      double sum = 0, magnitude = 0;
      for (int k = 0; k < K; ++k) {
        const double product = double(a[ta ? size_t(k) * M + r : size_t(r) * K + k]) *
                               double(b[tb ? size_t(c) * K + k : size_t(k) * N + c]);
        sum += product;
        magnitude += std::abs(product);
      }
      want[size_t(r) * N + c] = sum;
      bound[size_t(r) * N + c] = K * 1.2e-7 * magnitude + 1e-30;
    }
}

void launch(int candidate, int M, int N, int K, bool ta, bool tb, const __nv_bfloat16* A, const __nv_bfloat16* B,
            float* C) {
  if (ta) tb ? mma_sync_v24::launch<true, true>(candidate, M, N, K, A, B, C)
             : mma_sync_v24::launch<true, false>(candidate, M, N, K, A, B, C);
  else tb ? mma_sync_v24::launch<false, true>(candidate, M, N, K, A, B, C)
          : mma_sync_v24::launch<false, false>(candidate, M, N, K, A, B, C);
}  // a launch the checker stops records its error, as CUDA does, for check()

}  // namespace

TEST_CASE("mma_sync autotune: every candidate of matmul/24 matches the CPU reference at awkward sizes and all layouts") {
  // 1: below every tile. 127x129x65: odd everywhere, rows not 16-byte
  // aligned (the element-by-element copies). 136x264x232: multiples of 8 but
  // of no tile (16-byte cp.async chunks, zero-filled past every edge); 8
  // k-steps of 32, the last partial: every ring, 2 to 4 stages, goes round
  // at least twice. 1, 127x129x65 and 136x264x232 give v23's loop 1, 3 and
  // 8 steps: its last step loads no next stage. 136x129x232: A's rows
  // whole 16-byte chunks and B's not where B is row-major (N = 129), so the
  // hoisted candidates launch their stage_tile instance there (an operand
  // off whole chunks switches the whole block, checked below) with one
  // operand on each of stage_tile's paths; with B stored (N,K) the hoisted
  // copies run.
  static_assert(!mma_sync_v17::rows_whole_chunks<false, false>(136, 129, 232) &&
                    mma_sync_v17::rows_whole_chunks<false, true>(136, 129, 232),
                "136x129x232 routes the hoisted candidates as the comment says");
  const int sizes[][3] = {{1, 1, 1}, {127, 129, 65}, {136, 264, 232}, {136, 129, 232}};
  std::printf("mma_sync autotune test: seed %llu\n", (unsigned long long)kSeed);
  for (const auto& [M, N, K] : sizes)
    for (int layout = 0; layout < 4; ++layout) {
      const bool ta = layout / 2 == 1, tb = layout % 2 == 1;
      uint64_t state = kSeed;
      const Bf16Operand a(size_t(M) * K, state), b(size_t(K) * N, state);
      std::vector<double> want, bound;
      reference(M, N, K, ta, tb, a.value, b.value, want, bound);
      DeviceBuffer<__nv_bfloat16> d_a(a.stored), d_b(b.stored);
      for (int i = 0; i < mma_sync_v24::kCandidates; ++i)
        candidate_check::check(warpnet::cat(mma_sync_v24::candidate_name(i), " at M=", M, " N=", N, " K=", K,
                                            " trans_a=", ta, " trans_b=", tb, ", seed ", kSeed),
                               [&](float* c) { launch(i, M, N, K, ta, tb, d_a.get(), d_b.get(), c); }, want, bound);
    }
}

TEST_CASE("mma_sync autotune: the table picks v12's tile when it gives every SM of an H200 a block, else 64x64") {
  using mma_sync_v24::table_choice;
  CHECK(table_choice(1, 1) == mma_sync_v24::kSmall);
  CHECK(table_choice(1024, 2048) == mma_sync_v24::kSmall);  // 8 x 16 = 128 blocks of 128x128: short of 132
  CHECK(table_choice(1024, 2049) == mma_sync_v24::kV12);    // 8 x 17 = 136
  CHECK(table_choice(1152, 2048) == mma_sync_v24::kV12);  // 9 x 16 = 144
  CHECK(table_choice(4096, 4096) == mma_sync_v24::kV12);
}

TEST_CASE("mma_sync autotune: the candidates' blocks, grids and shared memory") {
  using mma_sync_v24::V12Tile, mma_sync_v24::V17HoistedTile, mma_sync_v24::V17Tile, mma_sync_v24::V23Tile;
  const auto is = [](int i, auto want) {
    return mma_sync_v24::with_candidate(i, [&]<class T>() { return std::is_same_v<T, decltype(want)>; });
  };
  // Candidate 1: v12's kernel in 4 warps of 64x64, static tiles, column tiles in x.
  CHECK(is(1, V12Tile<128, 128, 64, 64>{}));
  CHECK(V12Tile<128, 128, 64, 64>::THREADS == 128);
  CHECK(V12Tile<128, 128, 64, 64>::grid(300, 200).x == 2u);
  CHECK(V12Tile<128, 128, 64, 64>::grid(300, 200).y == 3u);
  CHECK(V12Tile<128, 128, 64, 64>::dynamic_shared<false, false>() == 0u);
  // Candidate 4: v17's kernel in 128x128 blocks of 4 warps, 4 stages, two blocks to an SM.
  using Ring4 = V17Tile<128, 4>;
  CHECK(is(4, Ring4{}));
  CHECK(Ring4::THREADS == 128);
  CHECK(Ring4::Tiles::MIN_BLOCKS == 2);
  CHECK(Ring4::grid(300, 200).x == 6u);  // 3 x 2 tiles in one dimension, grouped order
  // 4 stages of a 128x(32+8) A tile and a 32x(128+8) B tile of 2-byte elements; two fit an SM's 228 KiB.
  CHECK(Ring4::dynamic_shared<false, false>() == size_t(4) * (128 * 40 + 32 * 136) * 2);
  CHECK(2 * Ring4::dynamic_shared<false, true>() <= 228u * 1024);
  // Candidates 6 and 13: v17 and v23 themselves, one 8-warp block to an SM;
  // 9: v17's kernel and block with v23's hoisted copies.
  CHECK(is(6, V17Tile<256, 4>{}));
  CHECK(is(9, V17HoistedTile<256, 4>{}));
  CHECK(is(13, V23Tile<256, 4>{}));
  CHECK(!V17Tile<256, 4>::Tiles::HOISTED_COPIES);
  CHECK(V17HoistedTile<256, 4>::Tiles::HOISTED_COPIES);
  CHECK(V23Tile<256, 4>::Tiles::HOISTED_COPIES);
  CHECK(std::is_same_v<V17Tile<256, 4>::Tiles, mma_sync_v17::Registered>);
  CHECK(std::is_same_v<V23Tile<256, 4>::Tiles, mma_sync_v23::Registered>);
  CHECK(V17Tile<256, 4>::THREADS == 256);
  CHECK(mma_sync_v17::Registered::MIN_BLOCKS == 1);
}
