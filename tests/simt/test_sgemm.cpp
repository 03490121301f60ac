// The SGEMM kernels through the emulator against a plain triple loop, at sizes
// that are not tile multiples, in parallel and deterministic mode.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "tests/simt/device_buffer.hpp"
// Anonymous: traced test files compile the same kernels.
namespace {
#include "kernels/matmul/01_naive.cu"
#include "kernels/matmul/02_smem_tiled.cu"
}  // namespace

namespace {

constexpr unsigned kSeed = 1234;

std::vector<float> random_matrix(int rows, int cols, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> m(size_t(rows) * cols);
  for (float& x : m) x = dist(rng);
  return m;
}

// Compares C to the double-precision product. Each output is a K-term float
// dot product; with or without FMA contraction its rounding error is at most
// about K * eps * sum|a*b| (the classic bound), so that is the tolerance.
void check_product(int M, int N, int K, const std::vector<float>& A, const std::vector<float>& B,
                   const std::vector<float>& C) {
  int mismatches = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double exact = 0.0, magnitude = 0.0;
      for (int k = 0; k < K; ++k) {
        exact += double(A[i * K + k]) * B[k * N + j];
        magnitude += std::abs(double(A[i * K + k]) * B[k * N + j]);
      }
      const double tolerance = K * 1.2e-7 * magnitude + 1e-30;
      const double got = C[i * N + j];
      if (!(std::abs(got - exact) <= tolerance) && ++mismatches <= 5)
        std::printf("C[%d,%d] = %.9g, expected %.9g (tolerance %.3g)\n", i, j, got, exact, tolerance);
    }
  CHECK(mismatches == 0);
}

enum class Kernel { naive, tiled16 };

void run_sgemm(Kernel kernel, int M, int N, int K) {
  std::mt19937 rng(kSeed);
  const auto A = random_matrix(M, K, rng), B = random_matrix(K, N, rng);
  DeviceBuffer<float> dA(A), dB(B), dC(size_t(M) * N);  // dC starts poisoned (NaN)
  const dim3 block(16, 16), grid(warpnet::ceil_div(N, 16), warpnet::ceil_div(M, 16));
  if (kernel == Kernel::naive)
    warpnet::launch_kernel(sgemm_naive, grid, block, 0, M, N, K, dA.get(), dB.get(), dC.get());
  else
    warpnet::launch_kernel(sgemm_smem_tiled<16>, grid, block, 0, M, N, K, dA.get(), dB.get(), dC.get());
  REQUIRE(cudaGetLastError() == cudaSuccess);
  check_product(M, N, K, A, B, dC.download());
}

}  // namespace

TEST_CASE("sgemm naive and shared-memory tiled match the reference at awkward sizes") {
  INFO("seed ", kSeed);
  const int sizes[][3] = {{1, 1, 1}, {7, 7, 7}, {33, 33, 33}, {127, 129, 65}};
  for (const auto& s : sizes) {
    CAPTURE(s[0]);
    CAPTURE(s[1]);
    CAPTURE(s[2]);
    run_sgemm(Kernel::naive, s[0], s[1], s[2]);
    run_sgemm(Kernel::tiled16, s[0], s[1], s[2]);
  }
}

TEST_CASE("sgemm tiled gives bit-identical results in deterministic and parallel mode") {
  const int M = 40, N = 50, K = 70;
  std::mt19937 rng(kSeed);
  const auto A = random_matrix(M, K, rng), B = random_matrix(K, N, rng);
  DeviceBuffer<float> dA(A), dB(B), dC(size_t(M) * N);
  const dim3 block(16, 16), grid(warpnet::ceil_div(N, 16), warpnet::ceil_div(M, 16));
  std::vector<float> results[2];
  for (int workers : {1, 2}) {
    warpnet::simt::set_workers(workers);
    warpnet::simt::launch(sgemm_smem_tiled<16>, grid, block, 0, M, N, K, dA.get(), dB.get(), dC.get());
    results[workers - 1] = dC.download();
  }
  warpnet::simt::set_workers(0);
  CHECK(results[0] == results[1]);
}
