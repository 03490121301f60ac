// The emulator's scheduling does not change a kernel's result: the tiled SGEMM
// in deterministic (one worker) and parallel mode. Correctness against the CPU
// reference, for every matmul version, is test_registry.cpp's job.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "tests/simt/device_buffer.hpp"
// Anonymous: traced test files compile the same kernels.
namespace {
#include "kernels/matmul/03_smem_tiled.cu"
}  // namespace

namespace {

constexpr unsigned kSeed = 1234;

std::vector<float> random_matrix(int rows, int cols, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> m(size_t(rows) * cols);
  for (float& x : m) x = dist(rng);
  return m;
}

}  // namespace

TEST_CASE("sgemm tiled gives bit-identical results in deterministic and parallel mode") {
  const int M = 40, N = 50, K = 70;
  std::mt19937 rng(kSeed);
  const auto A = random_matrix(M, K, rng), B = random_matrix(K, N, rng);
  DeviceBuffer<float> dA(A), dB(B), dC(size_t(M) * N);
  const dim3 block(16, 16), grid(warpnet::ceil_div(N, 16), warpnet::ceil_div(M, 16));
  std::vector<float> results[2];
  for (int workers : {1, 2}) {
    warpnet::simt::set_workers(workers);
    dC.upload(std::vector<float>(size_t(M) * N, NAN));  // a launch that writes nothing cannot match
    warpnet::simt::launch(sgemm_smem_tiled<16>, grid, block, 0, M, N, K, dA.get(), dB.get(), dC.get());
    results[workers - 1] = dC.download();
  }
  warpnet::simt::set_workers(0);
  CHECK(results[0] == results[1]);
}
