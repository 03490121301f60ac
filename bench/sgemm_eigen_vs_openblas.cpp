// bench_sgemm — single-precision GEMM on the CPU: Eigen against OpenBLAS.
//
// Idea: warpnet's CPU reference path (src/cpu) does its matrix products with
// Eigen. This benchmark asks how far that is from a tuned BLAS on the same
// machine, same inputs, same thread count: C = A·B, all row-major.
//
//   A: (M,K) row-major   B: (K,N) row-major   C: (M,N) row-major   M=N=K=--size
//
// Harness (STYLE.md habit 7): verify first (relative Frobenius error of the
// two results < 1e-5, else exit 1), warm up, evict the caches between runs,
// time each run on the wall clock, report the median as GFLOP/s = 2·M·N·K / t
// and the ratio Eigen/OpenBLAS (1.0 = parity, 0.5 = Eigen takes twice as long).
//
// Figures: none typed here. They come from a run (--json writes the record
// that bench/README.md and the closing notes quote), because they depend on
// the machine, its load and OPENBLAS_CORETYPE.
//
// Reproduce:
//   cmake --build build --target bench_sgemm
//   build/bin/bench_sgemm --size 1024 --threads 2 --repeats 10 --json /tmp/sgemm.json
#include <Eigen/Core>
#include <cblas.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/timer.hpp"

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapRM = Eigen::Map<RowMajor>;
using ConstMapRM = Eigen::Map<const RowMajor>;

// The CPU model as the kernel reports it; "unknown" where there is no /proc.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

std::string utc_now_iso8601() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// Writing a buffer larger than the last-level cache pushes A, B and C out of
// it, so every timed run starts from memory the way a layer step does. For a
// compute-bound GEMM this changes little, but it keeps one run from warming
// the next.
class CacheFlusher {
 public:
  explicit CacheFlusher(std::size_t bytes = std::size_t{256} << 20) : buf_(bytes) {}
  void flush() {
    ++pass_;
    std::fill(buf_.begin(), buf_.end(), pass_);
    sink_ = sink_ + buf_[pass_ % buf_.size()];  // a read the compiler must keep
  }

 private:
  std::vector<unsigned char> buf_;
  unsigned char pass_ = 0;
  volatile unsigned sink_ = 0;
};

// Median wall time (seconds) of `repeats` runs of `gemm`, after `warmup`
// untimed runs. Before the block we sleep briefly: the other library's idle
// worker threads spin (OpenBLAS) or wait (OpenMP) for a while after their
// last job, and would otherwise steal one of our cores during warm-up.
double median_seconds(const std::function<void()>& gemm, int warmup, int repeats,
                      CacheFlusher& flusher) {
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (int i = 0; i < warmup; ++i) gemm();
  std::vector<double> times;
  times.reserve(repeats);
  for (int i = 0; i < repeats; ++i) {
    flusher.flush();
    warpnet::Timer timer;
    gemm();
    times.push_back(timer.seconds());
  }
  std::sort(times.begin(), times.end());
  const std::size_t n = times.size();
  return n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

// ||x - ref||_F / ||ref||_F, accumulated in double.
double relative_frobenius_error(const std::vector<float>& x, const std::vector<float>& ref) {
  double diff2 = 0.0, ref2 = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = double(x[i]) - double(ref[i]);
    diff2 += d * d;
    ref2 += double(ref[i]) * double(ref[i]);
  }
  return std::sqrt(diff2 / ref2);
}

// OpenBLAS built with DYNAMIC_ARCH picks its kernel from CPUID at load time.
// On a virtual machine that hides the CPU model it can fall back to an old
// SSE3 kernel ("Prescott") while Eigen, compiled with -march=native, uses
// AVX2/AVX-512: the ratio then compares instruction sets, not libraries.
// Returns a warning in that case, else an empty string. OPENBLAS_CORETYPE
// (e.g. SkylakeX, Cooperlake, Haswell) overrides the choice.
std::string kernel_mismatch_warning(const std::string& corename) {
  auto among = [&](std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return corename == n; });
  };
  [[maybe_unused]] const bool avx512 = among({"SkylakeX", "Cooperlake", "SapphireRapids"});
  [[maybe_unused]] const bool avx2 = avx512 || among({"Haswell", "Zen", "Excavator"});
#if defined(__AVX512F__)
  if (!avx512)
    return "OpenBLAS uses its '" + corename +
           "' kernel (no AVX-512) while Eigen was compiled with AVX-512";
#elif defined(__AVX2__)
  if (!avx2)
    return "OpenBLAS uses its '" + corename + "' kernel (no AVX2) while Eigen was compiled with AVX2";
#endif
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"SGEMM C = A·B, Eigen vs OpenBLAS, at --size³ on --threads threads"};
  int size = 1024, threads = 2, repeats = 10, warmup = 3;
  unsigned seed = 1;
  std::string json_path;
  app.add_option("--size", size, "M = N = K")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "threads for both libraries")->check(CLI::PositiveNumber);
  app.add_option("--repeats", repeats, "timed runs per library (median reported)")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed runs per library first")->check(CLI::NonNegativeNumber);
  app.add_option("--seed", seed, "seed of the uniform(-1,1) inputs");
  app.add_option("--json", json_path, "write a JSON record here");
  CLI11_PARSE(app, argc, argv);

  const int M = size, N = size, K = size;
  std::printf("bench_sgemm: M=N=K=%d threads=%d repeats=%d warmup=%d seed=%u\n", size, threads,
              repeats, warmup, seed);

  // Same inputs for both libraries, from a fixed printed seed.
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(std::size_t(M) * K), b(std::size_t(K) * N);  // A: (M,K)  B: (K,N)
  for (float& v : a) v = uniform(rng);
  for (float& v : b) v = uniform(rng);
  std::vector<float> c_eigen(std::size_t(M) * N), c_blas(std::size_t(M) * N);  // C: (M,N)

  Eigen::setNbThreads(threads);
  openblas_set_num_threads(threads);

  ConstMapRM A(a.data(), M, K), B(b.data(), K, N);
  MapRM C_eigen(c_eigen.data(), M, N);
  auto run_eigen = [&] { C_eigen.noalias() = A * B; };
  // The plain loop both calls stand for: C[i][j] = sum_k A[i][k] * B[k][j].
  auto run_blas = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a.data(), K, b.data(),
                N, 0.0f, c_blas.data(), N);
  };

  // 1. Verify. The two libraries sum in different orders, so they differ by
  //    rounding: about eps·sqrt(K) relative (~2e-6 at K=1024). 1e-5 leaves
  //    room for that and still catches a wrong layout or leading dimension.
  std::fill(c_eigen.begin(), c_eigen.end(), NAN);  // poison: an unwritten C fails
  std::fill(c_blas.begin(), c_blas.end(), NAN);
  run_eigen();
  run_blas();
  const double rel_err = relative_frobenius_error(c_eigen, c_blas);
  std::printf("verify: relative Frobenius error Eigen vs OpenBLAS = %.3e (limit 1e-5)\n", rel_err);
  if (!(rel_err < 1e-5)) {
    std::fprintf(stderr, "bench_sgemm: results disagree (%.3e >= 1e-5); not timing\n", rel_err);
    return 1;
  }

  // 2. Time each library in its own block.
  CacheFlusher flusher;
  const double t_eigen = median_seconds(run_eigen, warmup, repeats, flusher);
  const double t_blas = median_seconds(run_blas, warmup, repeats, flusher);
  const double flop = 2.0 * M * N * K;
  const double gf_eigen = flop / t_eigen * 1e-9, gf_blas = flop / t_blas * 1e-9;
  const double ratio = gf_eigen / gf_blas;

  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  const std::string cpu = cpu_model();
  std::printf("cpu: %s | OpenBLAS core: %s | OPENBLAS_CORETYPE=%s\n", cpu.c_str(),
              openblas_get_corename(), coretype ? coretype : "(unset)");
  std::printf("%-10s %12s %12s\n", "library", "median ms", "GFLOP/s");
  std::printf("%-10s %12.3f %12.1f\n", "Eigen", t_eigen * 1e3, gf_eigen);
  std::printf("%-10s %12.3f %12.1f\n", "OpenBLAS", t_blas * 1e3, gf_blas);
  std::printf("ratio Eigen/OpenBLAS (GFLOP/s) = %.3f\n", ratio);
  const std::string warning = kernel_mismatch_warning(openblas_get_corename());
  if (!warning.empty())
    std::printf("WARNING: %s; the ratio compares instruction sets. Setting OPENBLAS_CORETYPE "
                "to this CPU's family (e.g. SkylakeX) gives OpenBLAS its real kernel.\n",
                warning.c_str());

  if (!json_path.empty()) {
    nlohmann::json rec = {
        {"benchmark", "sgemm_eigen_vs_openblas"},
        {"date", utc_now_iso8601()},
        {"cpu_model", cpu},
        {"hardware_threads", std::thread::hardware_concurrency()},
        {"threads", threads},
        {"m", M}, {"n", N}, {"k", K},
        {"repeats", repeats},
        {"warmup", warmup},
        {"seed", seed},
        {"relative_frobenius_error", rel_err},
        {"eigen_version", std::to_string(EIGEN_WORLD_VERSION) + "." +
                              std::to_string(EIGEN_MAJOR_VERSION) + "." +
                              std::to_string(EIGEN_MINOR_VERSION)},
        {"openblas_config", openblas_get_config()},
        {"openblas_corename", openblas_get_corename()},
        {"openblas_coretype_env", coretype ? nlohmann::json(coretype) : nlohmann::json(nullptr)},
        {"openblas_kernel_warning", warning.empty() ? nlohmann::json(nullptr) : nlohmann::json(warning)},
        {"eigen_median_ms", t_eigen * 1e3},
        {"openblas_median_ms", t_blas * 1e3},
        {"eigen_gflops", gf_eigen},
        {"openblas_gflops", gf_blas},
        {"ratio_eigen_over_openblas", ratio},
    };
    std::ofstream out(json_path);
    out << rec.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "bench_sgemm: cannot write %s\n", json_path.c_str());
      return 1;
    }
    std::printf("wrote %s\n", json_path.c_str());
  }
  return 0;
}
