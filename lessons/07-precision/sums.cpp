// Lesson 07, part 7: one dot product of 2 x 8192 values, summed in fp32, in
// fp16 pairs and in bf16 pairs (__hfma2), by one thread and by a warp, on
// the SIMT emulator, against its exact sum.
#include "lessons/07-precision/sums.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "kernels/examples/half_sums.cu"
#include "lessons/lesson_checks.hpp"

namespace warpnet::lesson07 {
namespace {

constexpr int kTerms = 8192;

// One row of the table: the accumulator, how many threads share the sum, and what it came to.
struct Sum {
  const char* accumulator;
  int threads;
  double value;
};

// n values k/256, k uniform in [0, 256): exact in fp16 and bf16 alike (8
// significant bits at most), so every row multiplies the same numbers and
// differs only in where it keeps the sum; each product is exact in double.
std::vector<float> eighths_of_a_byte(int n, Rng& rng) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = float(rng.below(256)) / 256.0f;
  return v;
}

template <class Kernel>
double run_dot(Kernel kernel, int threads, const std::vector<float>& x, const std::vector<float>& y) {
  const size_t bytes = x.size() * sizeof(float);
  float *dx = nullptr, *dy = nullptr, *dout = nullptr;
  WARPNET_CUDA_CHECK(cudaMalloc(&dx, bytes));
  WARPNET_CUDA_CHECK(cudaMalloc(&dy, bytes));
  WARPNET_CUDA_CHECK(cudaMalloc(&dout, sizeof(float)));
  WARPNET_CUDA_CHECK(cudaMemcpy(dx, x.data(), bytes, cudaMemcpyHostToDevice));
  WARPNET_CUDA_CHECK(cudaMemcpy(dy, y.data(), bytes, cudaMemcpyHostToDevice));
  warpnet::launch_kernel(kernel, dim3(1), dim3(unsigned(threads)), 0, dx, dy, int(x.size()), dout);
  WARPNET_CUDA_CHECK(cudaGetLastError());
  float out = 0;
  WARPNET_CUDA_CHECK(cudaMemcpy(&out, dout, sizeof(float), cudaMemcpyDeviceToHost));
  cudaFree(dx), cudaFree(dy), cudaFree(dout);
  return out;
}

double relative_error(double got, double exact) { return std::fabs(got - exact) / exact; }

}  // namespace

void where_sums_are_kept(bool markdown) {
  Rng rng(7);
  const std::vector<float> x = eighths_of_a_byte(kTerms, rng), y = eighths_of_a_byte(kTerms, rng);
  double exact = 0;  // every partial sum is a multiple of 2^-16 below 2^13: exact in double
  for (int i = 0; i < kTerms; ++i) exact += double(x[size_t(i)]) * double(y[size_t(i)]);

  std::vector<Sum> sums;
  for (const int threads : {1, 32}) {
    sums.push_back({"fp32 (FFMA)", threads, run_dot(dot_in_fp32, threads, x, y)});
    sums.push_back({"fp16 pairs (HFMA2)", threads, run_dot(dot_in_pairs<__half2>, threads, x, y)});
    sums.push_back({"bf16 pairs (HFMA2)", threads, run_dot(dot_in_pairs<__nv_bfloat162>, threads, x, y)});
  }
  const auto error_of = [&](const char* accumulator, int threads) {
    for (const Sum& s : sums)
      if (std::string(s.accumulator) == accumulator && s.threads == threads) return relative_error(s.value, exact);
    fail("lesson07: no sum kept in ", accumulator, " by ", threads, " threads");
  };

  if (!markdown)
    std::printf("7. Where the sum is kept: %d products of values k/256, summed on the SIMT emulator\n"
                "   (kernels/examples/half_sums.cu); exact sum %.6f\n\n",
                kTerms, exact);
  if (markdown) {
    std::printf("| accumulator | threads | sum | error |\n|---|---:|---:|---:|\n");
  } else {
    std::printf("  %-20s %8s %14s %10s\n", "accumulator", "threads", "sum", "error");
  }
  for (const Sum& s : sums) {
    char error[32];  // two significant digits, however small
    std::snprintf(error, sizeof error, "%.2g%%", 100 * relative_error(s.value, exact));
    if (markdown)
      std::printf("| %s | %d | %.4f | %s |\n", s.accumulator, s.threads, s.value, error);
    else
      std::printf("  %-20s %8d %14.4f %10s\n", s.accumulator, s.threads, s.value, error);
  }
  if (markdown) {
    std::printf("\nPrinted by `build/bin/lesson07 --markdown sums` (the SIMT emulator; the same bits on any GPU\n"
                "that rounds each HFMA2 once). Exact sum: %.6f.\n",
                exact);
  } else {
    std::printf("\n");
  }

  // The chapter's claims (README, part 7).
  for (const int threads : {1, 32}) {
    lesson::expect(error_of("fp32 (FFMA)", threads) < 1e-5, "an fp32 sum is within 0.001% of the exact one");
    lesson::expect(error_of("fp16 pairs (HFMA2)", threads) > 10 * error_of("fp32 (FFMA)", threads),
                   "fp16 sums lose at least 10 times more than fp32");
    lesson::expect(error_of("bf16 pairs (HFMA2)", threads) > error_of("fp16 pairs (HFMA2)", threads),
                   "bf16, with 3 fewer bits, loses more than fp16");
  }
  lesson::expect(error_of("fp16 pairs (HFMA2)", 1) > 0.01, "one thread's fp16 sum is off by more than 1%");
  lesson::expect(error_of("bf16 pairs (HFMA2)", 1) > 0.5, "one thread's bf16 sum stalls at under half the exact sum");
  for (const char* narrow : {"fp16 pairs (HFMA2)", "bf16 pairs (HFMA2)"})
    lesson::expect(error_of(narrow, 32) * 10 < error_of(narrow, 1),
                   cat("32 lanes' partial sums cut the ", narrow, " error at least tenfold"));
}

}  // namespace warpnet::lesson07
