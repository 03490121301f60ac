// Every candidate tile shape of matmul/10_autotuned against a CPU reference,
// at awkward sizes and all four layouts. The registry test checks only the
// candidate the tuning table picks at each test size; on a GPU the autotuner
// may pick any of them, so each is checked here. Traced (see ../../CMakeLists.txt):
// the checker also fails a launch on any out-of-bounds access, shared-memory
// race or uninitialized shared read.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "kernels/common/all.hpp"  // before the kernel files (see there)
#include "tests/simt/traced/candidate_check.hpp"

namespace {
#include "kernels/matmul/10_autotuned.cu"
}  // namespace

namespace {

using candidate_check::kSeed;

struct Problem {
  int M, N, K;
  bool ta, tb;
};

// C = op(A) @ op(B) in double, and the bound each element may err by: an fp32
// K-term dot product, summed in any order, errs by at most about
// K * eps * sum |a*b| (eps = 2^-23 ~ 1.2e-7), the bound of the registry's matmul op.
void reference(const Problem& p, const std::vector<float>& a, const std::vector<float>& b, std::vector<double>& want,
               std::vector<double>& bound) {
  want.assign(size_t(p.M) * p.N, 0.0);
  bound.assign(size_t(p.M) * p.N, 0.0);
  for (int r = 0; r < p.M; ++r)
    for (int c = 0; c < p.N; ++c) {
      double sum = 0, magnitude = 0;
      for (int k = 0; k < p.K; ++k) {
        const double product = double(a[p.ta ? size_t(k) * p.M + r : size_t(r) * p.K + k]) *
                               double(b[p.tb ? size_t(c) * p.K + k : size_t(k) * p.N + c]);
        sum += product;
        magnitude += std::abs(product);
      }
      want[size_t(r) * p.N + c] = sum;
      bound[size_t(r) * p.N + c] = p.K * 1.2e-7 * magnitude + 1e-30;
    }
}

// Candidate i's kernel for the problem's layout, launched with its own shape;
// split K, into NaN-poisoned partials (a slice never written fails) that
// sum_splits then adds into C, as the registration does.
void launch_candidate(int i, const Problem& p, const float* A, const float* B, float* C) {
  const int slices = sgemm_v10::split_of(i, p.M, p.N, p.K);
  const size_t elements = size_t(p.M) * p.N;
  DeviceBuffer<float> part(std::vector<float>(slices * elements, std::numeric_limits<float>::quiet_NaN()));
  sgemm_v10::with_candidate(i, [&]<class T>() {
    const auto kernel =
        p.ta ? (p.tb ? T::template kernel<true, true>(p.M, p.N, A, B) : T::template kernel<true, false>(p.M, p.N, A, B))
             : (p.tb ? T::template kernel<false, true>(p.M, p.N, A, B) : T::template kernel<false, false>(p.M, p.N, A, B));
    const dim3 grid(warpnet::ceil_div(p.N, T::BN), warpnet::ceil_div(p.M, T::BM), slices);
    warpnet::simt::launch(kernel, grid, dim3(T::threads), 0, p.M, p.N, p.K, A, B, slices > 1 ? part.get() : C);
  });
  if (slices > 1) {
    const warpnet::SumSplitsLaunch sum = warpnet::sum_splits_launch(int(elements), slices);
    warpnet::simt::launch(warpnet::sum_splits<warpnet::kSumThreads>, sum.grid, sum.block, 0, int(elements), slices,
                          static_cast<const float*>(part.get()), C);
  }
}

}  // namespace

TEST_CASE("autotune: every candidate of matmul/10 matches the CPU reference at awkward sizes and all layouts") {
  // 1 and 7x5x3: below every tile; 33x31x35 and 127x129x65: odd everywhere
  // (rows not whole float4s: the 4-byte copies); 260x136x40: multiples of 4 but
  // of no tile, K of no BK (16-byte copies, zero-filled chunks at every edge);
  // 256x128x64: whole tiles for every candidate. 33x47x300 and 100x36x520:
  // K split (64x64x16 into 4 and 7 slices, 32x32x32 into 2 and 4, 32x32x64
  // into 2 and 3), the last slice shorter and ending off BK. 260x129x40:
  // A stored (K,M) in whole float4s, row-major B not, so the hoisted
  // candidates launch their stage_tile instance when B is row-major and
  // their hoisted one when it is stored (N,K).
  const int sizes[][3] = {{1, 1, 1},      {7, 5, 3},       {33, 31, 35},  {127, 129, 65},  {260, 136, 40},
                          {256, 128, 64}, {33, 47, 300}, {100, 36, 520}, {260, 129, 40}};
  std::printf("autotune test: seed %llu\n", (unsigned long long)kSeed);
  for (const auto& [M, N, K] : sizes)
    for (int layout = 0; layout < 4; ++layout) {
      const Problem p{M, N, K, layout / 2 == 1, layout % 2 == 1};
      uint64_t state = kSeed;
      const std::vector<float> a = candidate_check::uniform(size_t(M) * K, state),
                               b = candidate_check::uniform(size_t(K) * N, state);
      std::vector<double> want, bound;
      reference(p, a, b, want, bound);
      DeviceBuffer<float> d_a(a), d_b(b);
      for (int i = 0; i < sgemm_v10::kCandidates; ++i)
        candidate_check::check(warpnet::cat(sgemm_v10::candidate_name(i), " at M=", M, " N=", N, " K=", K,
                                            " trans_a=", p.ta, " trans_b=", p.tb, ", seed ", kSeed),
                               [&](float* c) { launch_candidate(i, p, d_a.get(), d_b.get(), c); }, want, bound);
    }
}

TEST_CASE("autotune: split-K cuts K into whole BK-steps, enough for a block per SM, none empty") {
  using sgemm_v10::split_of;
  for (int i = 0; i < sgemm_v10::kTiles; ++i) CHECK(split_of(i, 33, 47, 300) == 1);  // the tiles keep K whole
  CHECK(split_of(6, 33, 47, 300) == 4);  // 1 block; 300 / (4 * 16) = 4 slices of 80
  CHECK(split_of(7, 33, 47, 300) == 2);  // 4 blocks; 300 / (4 * 32) = 2 slices of 160
  CHECK(split_of(6, 100, 36, 520) == 7);  // 8 slices wanted: ceil(65 / 16) * 16 = 80 each, so 7
  CHECK(split_of(7, 100, 36, 520) == 4);  // 4 of 160 (the last 40)
  CHECK(split_of(6, 256, 120, 400) == 5);  // LeNet-5's fc1 at batch 256: 8 blocks, 6 wanted, 80 each, so 5
  CHECK(split_of(7, 256, 120, 400) == 3);  // 32 blocks, 3 slices of 160 (the last 80)
  CHECK(split_of(7, 64, 64, 100) == 1);    // under 4 BK-steps per slice: no split
  CHECK(split_of(6, 1024, 1024, 4096) == 1);  // 256 blocks already fill the SMs
  // The small-problem kernel: 8 keeps K whole, 9 splits it into slices of at least two 64-steps.
  CHECK(split_of(8, 33, 47, 300) == 1);
  CHECK(split_of(9, 33, 47, 300) == 2);    // 4 blocks; 300 / (2 * 64) = 2 slices of 192 (the last 108)
  CHECK(split_of(9, 100, 36, 520) == 3);   // 4 wanted: ceil(130 / 64) * 64 = 192 each, so 3
  CHECK(split_of(9, 64, 120, 400) == 3);   // LeNet-5's fc1 at batch 64: 8 blocks, 3 slices of 192 (the last 16)
  CHECK(split_of(9, 64, 84, 120) == 1);    // under two steps a slice: no split
}

TEST_CASE("autotune: the tuning table picks the largest tile that gives every SM of an H200 a block, else splits K") {
  using sgemm_v10::table_choice;
  CHECK(table_choice(1, 1, 1) == 5);            // nothing reaches 132 blocks, K too short to split: the smallest tile
  CHECK(table_choice(128, 128, 128) == 5);      // 16 blocks; split, 8 (64x64 x 2) or 16 (32x32 unsplit)
  CHECK(table_choice(256, 120, 400) == 7);      // 32x32 split 3 ways: 96 blocks, against 40 and 32
  CHECK(table_choice(128, 128, 4096) == 7);     // 32x32 split 9 ways: 144 blocks; 64x64 32 ways: 128
  CHECK(table_choice(1024, 1024, 1024) == 4);   // 64x64: 256 blocks; 128x64 would be 128
  CHECK(table_choice(1024, 2048, 1024) == 3);   // 128x64: 256 blocks
  CHECK(table_choice(2048, 2048, 2048) == 1);   // 128x128: 256 blocks; 256x128 would be 128
  CHECK(table_choice(4096, 4096, 4096) == 0);   // 256x128: 512 blocks
}

TEST_CASE("autotune: the hoisted candidates launch stage_tile's instance where a k-major operand is not whole float4s") {
  using sgemm_v10::C1, sgemm_v10::C1Hoisted;
  alignas(16) static float storage[8];
  const float* aligned = storage;
  const float* misaligned = storage + 1;
  // Whether C1Hoisted launches C1's own kernel (stage_tile's copies) for this problem.
  const auto stage_tile = []<bool TA, bool TB>(int M, int N, const float* A, const float* B) {
    return C1Hoisted::kernel<TA, TB>(M, N, A, B) == C1::kernel<TA, TB>(M, N, A, B);
  };
  // Row-major A is copied a float at a time in any shape; row-major B 16 bytes at a time.
  CHECK_FALSE(stage_tile.operator()<false, false>(7, 8, misaligned, aligned));
  CHECK(stage_tile.operator()<false, false>(8, 7, aligned, aligned));
  CHECK(stage_tile.operator()<false, false>(8, 8, aligned, misaligned));
  // A stored (K,M) is copied 16 bytes at a time: M and its start decide.
  CHECK_FALSE(stage_tile.operator()<true, true>(8, 7, aligned, misaligned));
  CHECK(stage_tile.operator()<true, true>(6, 8, aligned, aligned));
  CHECK(stage_tile.operator()<true, true>(8, 8, misaligned, aligned));
}
