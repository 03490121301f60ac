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
#include "tests/simt/device_buffer.hpp"

namespace {
#include "kernels/matmul/10_autotuned.cu"
}  // namespace

namespace {

constexpr uint64_t kSeed = 2026;

// Uniform in [-1, 1) from a fixed-seed 64-bit LCG (Knuth's MMIX constants).
std::vector<float> uniform(size_t n, uint64_t& state) {
  std::vector<float> v(n);
  for (float& x : v) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = float(double(state >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  }
  return v;
}

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

// Candidate i's kernel for the problem's layout, launched with its own shape.
void launch_candidate(int i, const Problem& p, const float* A, const float* B, float* C) {
  sgemm_v10::with_candidate(i, [&]<class T>() {
    const auto kernel = p.ta ? (p.tb ? T::template kernel<true, true>() : T::template kernel<true, false>())
                             : (p.tb ? T::template kernel<false, true>() : T::template kernel<false, false>());
    const dim3 grid(warpnet::ceil_div(p.N, T::BN), warpnet::ceil_div(p.M, T::BM));
    warpnet::simt::launch(kernel, grid, dim3(T::threads), 0, p.M, p.N, p.K, A, B, C);
  });
}

}  // namespace

TEST_CASE("autotune: every candidate of matmul/10 matches the CPU reference at awkward sizes and all layouts") {
  // 1 and 7x5x3: below every tile; 33x31x35 and 127x129x65: odd everywhere
  // (rows not whole float4s: the 4-byte copies); 260x136x40: multiples of 4 but
  // of no tile, K of no BK (16-byte copies, zero-filled chunks at every edge);
  // 256x128x64: whole tiles for every candidate.
  const int sizes[][3] = {{1, 1, 1}, {7, 5, 3}, {33, 31, 35}, {127, 129, 65}, {260, 136, 40}, {256, 128, 64}};
  std::printf("autotune test: seed %llu\n", (unsigned long long)kSeed);
  for (const auto& [M, N, K] : sizes)
    for (int layout = 0; layout < 4; ++layout) {
      const Problem p{M, N, K, layout / 2 == 1, layout % 2 == 1};
      uint64_t state = kSeed;
      const std::vector<float> a = uniform(size_t(M) * K, state), b = uniform(size_t(K) * N, state);
      std::vector<double> want, bound;
      reference(p, a, b, want, bound);
      DeviceBuffer<float> d_a(a), d_b(b);
      for (int i = 0; i < sgemm_v10::kCandidates; ++i) {
        const std::string what = warpnet::cat(sgemm_v10::candidate_name(i), " at M=", M, " N=", N, " K=", K,
                                              " trans_a=", p.ta, " trans_b=", p.tb, ", seed ", kSeed);
        INFO(what);
        // Poisoned with NaN, so an element the kernel never writes cannot pass.
        DeviceBuffer<float> d_c(std::vector<float>(size_t(M) * N, std::numeric_limits<float>::quiet_NaN()));
        try {
          launch_candidate(i, p, d_a.get(), d_b.get(), d_c.get());
        } catch (const warpnet::simt::LaunchError& e) {
          FAIL_CHECK(std::string(e.what()));
          continue;
        }
        const std::vector<float> got = d_c.download();
        int mismatches = 0;
        for (size_t e = 0; e < got.size(); ++e) {
          if (std::abs(double(got[e]) - want[e]) <= bound[e]) continue;  // NaN fails here too
          if (++mismatches <= 5)
            std::printf("%s: C[%zu] = %g, want %g (tolerance %g)\n", what.c_str(), e, got[e], want[e], bound[e]);
        }
        CHECK(mismatches == 0);
      }
    }
}

TEST_CASE("autotune: the tuning table picks the largest tile that gives every SM of an H200 a block") {
  CHECK(sgemm_v10::table_choice(1, 1) == 4);        // nothing reaches 132 blocks: the smallest tile
  CHECK(sgemm_v10::table_choice(128, 128) == 4);
  CHECK(sgemm_v10::table_choice(1024, 1024) == 3);  // 64x64: 256 blocks; 128x64 would be 128
  CHECK(sgemm_v10::table_choice(1024, 2048) == 2);  // 128x64: 256 blocks
  CHECK(sgemm_v10::table_choice(2048, 2048) == 1);  // 128x128: 256 blocks; 256x128 would be 128
  CHECK(sgemm_v10::table_choice(4096, 4096) == 0);  // 256x128: 512 blocks
}
