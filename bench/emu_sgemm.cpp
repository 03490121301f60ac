// The emulator's speed, against issue 3's targets:
//  - naive SGEMM 128^3 through the emulator (target: >= 200x faster than
//    Numba's CUDA simulator on the same machine);
//  - __syncthreads() cost per thread in 1024-thread blocks (target: <= 50 ns);
//  - shared-memory tiled SGEMM 256^3 against a scalar triple loop (target: within 30x).
// Each figure is the median of several runs, results checked before timing.
// Run: build/bin/bench_emu_sgemm [--workers N]   (prints a table and one JSON line)
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "kernels/common/cuda_compat.hpp"
#include "kernels/matmul/01_naive.cu"
#include "kernels/matmul/03_smem_tiled.cu"

namespace {

// Each thread passes `rounds` barriers; nothing else, so the time is the barrier's.
__global__ void barriers(int rounds, int* out) {
  for (int r = 0; r < rounds; ++r) __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = rounds;
}

template <class F>
double median_ms(int runs, F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// C = A @ B as the plain triple loop: one float dot product per element, the
// same work each emulated thread does. (GCC cannot vectorize the float sum
// without -ffast-math, so this is scalar code.)
void scalar_sgemm(int n, const float* A, const float* B, float* C) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < n; ++k) acc += A[i * n + k] * B[k * n + j];
      C[i * n + j] = acc;
    }
}

struct Matrices {
  int n;
  std::vector<float> a, b;
  float *dA, *dB, *dC;
  explicit Matrices(int size) : n(size), a(size * size), b(size * size) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& x : a) x = dist(rng);
    for (float& x : b) x = dist(rng);
    const size_t bytes = size_t(n) * n * sizeof(float);
    WARPNET_CUDA_CHECK(cudaMalloc(&dA, bytes));
    WARPNET_CUDA_CHECK(cudaMalloc(&dB, bytes));
    WARPNET_CUDA_CHECK(cudaMalloc(&dC, bytes));
    WARPNET_CUDA_CHECK(cudaMemcpy(dA, a.data(), bytes, cudaMemcpyHostToDevice));
    WARPNET_CUDA_CHECK(cudaMemcpy(dB, b.data(), bytes, cudaMemcpyHostToDevice));
  }
  ~Matrices() {
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
  }
  // Largest difference between the device result and the scalar loop.
  float max_error() const {
    std::vector<float> c(size_t(n) * n), ref(size_t(n) * n);
    WARPNET_CUDA_CHECK(cudaMemcpy(c.data(), dC, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
    scalar_sgemm(n, a.data(), b.data(), ref.data());
    float worst = 0.0f;
    for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::abs(c[i] - ref[i]));
    return worst;
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The emulator's speed: naive SGEMM 128^3, __syncthreads cost, tiled SGEMM 256^3 against a loop"};
  int workers_asked = 0;
  app.add_option("--workers", workers_asked, "emulator worker threads (default: one per hardware thread)")
      ->check(CLI::Range(1, 1024));
  CLI11_PARSE(app, argc, argv);
  if (workers_asked > 0) warpnet::simt::set_workers(workers_asked);
  const int workers = warpnet::simt::workers();
  nlohmann::json record{{"workers", workers}};

  {  // naive SGEMM 128^3
    Matrices m(128);
    const dim3 block(16, 16), grid(8, 8);
    const auto run = [&] { warpnet::launch_kernel(sgemm_naive<>, grid, block, 0, 128, 128, 128, m.dA, m.dB, m.dC); };
    run();
    WARPNET_CUDA_CHECK(cudaGetLastError());
    const float error = m.max_error();
    const double ms = median_ms(7, run);
    std::printf("naive SGEMM 128^3 (emulator)        %8.2f ms   max |err| %.2g\n", ms, error);
    record["naive_sgemm_128_ms"] = ms;
  }
  {  // __syncthreads in 1024-thread blocks: (time with R barriers - time with 0) / (R * threads)
    int* out;
    WARPNET_CUDA_CHECK(cudaMalloc(&out, 64 * sizeof(int)));
    const int blocks = 8, rounds = 100;
    const auto run = [&](int r) { warpnet::launch_kernel(barriers, dim3(blocks), dim3(1024), 0, r, out); };
    const double base = median_ms(5, [&] { run(0); });
    const double with = median_ms(5, [&] { run(rounds); });
    WARPNET_CUDA_CHECK(cudaGetLastError());
    const double ns = (with - base) * 1e6 / (double(rounds) * blocks * 1024);
    std::printf("__syncthreads, 1024-thread blocks   %8.1f ns per thread per barrier\n", ns);
    record["syncthreads_ns_per_thread"] = ns;
    cudaFree(out);
  }
  {  // tiled SGEMM 256^3 vs the scalar loop
    Matrices m(256);
    const dim3 block(16, 16), grid(16, 16);
    const auto run = [&] {
      warpnet::launch_kernel(sgemm_smem_tiled<16>, grid, block, 0, 256, 256, 256, m.dA, m.dB, m.dC);
    };
    run();
    WARPNET_CUDA_CHECK(cudaGetLastError());
    const float error = m.max_error();
    const double emu = median_ms(5, run);
    std::vector<float> c(256 * 256);
    const double loop = median_ms(5, [&] { scalar_sgemm(256, m.a.data(), m.b.data(), c.data()); });
    std::printf("tiled SGEMM 256^3 (emulator)        %8.2f ms   max |err| %.2g\n", emu, error);
    std::printf("scalar triple loop 256^3            %8.2f ms   ratio %.1fx\n", loop, emu / loop);
    record["tiled_sgemm_256_ms"] = emu;
    record["scalar_loop_256_ms"] = loop;
    record["tiled_over_scalar"] = emu / loop;
  }
  std::printf("%s\n", record.dump().c_str());
  return 0;
}
