// `warpnet bench`'s CPU half (bench.hpp, cpu_half): the op's own fp32 CPU
// path and a peer library, each timed as the median of runs after a flush of
// the last-level cache.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "cli/bench.hpp"
#include "cli/openblas_peer.hpp"
#include "core/rng.hpp"
#include "core/timer.hpp"
#include "cpu/ops.hpp"

namespace warpnet::cli::bench {

using nlohmann::json;

namespace {

// Writing a buffer larger than the last-level cache before each timed run
// pushes the operands out of it, as bench_sgemm does.
class CacheFlusher {
 public:
  void flush() {
    ++pass_;
    std::fill(buf_.begin(), buf_.end(), pass_);
    sink_ = sink_ + buf_[pass_ % buf_.size()];
  }

 private:
  std::vector<unsigned char> buf_ = std::vector<unsigned char>(size_t(512) << 20);
  unsigned char pass_ = 0;
  volatile unsigned sink_ = 0;
};

template <class F>
json time_cpu(F&& run, const Settings& s, CacheFlusher& flusher) {
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the other library's threads go idle
  run();  // warm-up
  std::vector<double> ms;
  double spent = 0;
  while (int(ms.size()) < s.runs) {
    flusher.flush();
    const Timer timer;
    run();
    ms.push_back(timer.milliseconds());
    spent += ms.back() * 1e-3;
    if (int(ms.size()) >= s.min_runs && spent >= s.budget_s) break;
  }
  return timing_json(ms);
}

// A peer library for an op on the CPU: only a benchmark peer, never a
// dependency (openblas_peer.hpp: opened at run time, when the build found it).
struct CpuPeer {
  const char* op;
  const char* library;
  bool (*open)(int threads, std::string& why);  // ready to run on `threads` threads; else why not
  json (*about)();
  Tensor (*run)(const device::Sizes&, const std::vector<Tensor>&);
};

#if WARPNET_HAS_OPENBLAS
const OpenBlas& openblas() {
  std::string why;
  const OpenBlas* blas = open_openblas(why);
  WN_CHECK(blas, why);
  return *blas;
}
bool openblas_open(int threads, std::string& why) {
  const OpenBlas* blas = open_openblas(why);
  if (blas) blas->set_num_threads(threads);
  return blas != nullptr;
}
json openblas_about() {
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  // Debian's OpenBLAS picks its kernel from CPUID; on a VM that hides the CPU
  // model it can fall back to an SSE3 one while Eigen uses AVX-512
  // (bench/README.md): quote the ratio with the kernel it used.
  return {{"corename", openblas().corename()},
          {"config", openblas().config()},
          {"OPENBLAS_CORETYPE", coretype ? json(coretype) : json(nullptr)}};
}
Tensor openblas_sgemm(const device::Sizes& s, const std::vector<Tensor>& in) {
  const int M = int(s[0]), N = int(s[1]), K = int(s[2]);
  const bool ta = s[3] != 0, tb = s[4] != 0;
  Tensor c = Tensor::empty({M, N});
  openblas().sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, 1.0f,
                   in[0].data<float>(), ta ? M : K, in[1].data<float>(), tb ? K : N, 0.0f, c.data<float>(), N);
  return c;
}
constexpr CpuPeer kPeers[] = {{"matmul", "openblas", openblas_open, openblas_about, openblas_sgemm}};
#else
bool no_openblas(int, std::string& why) { return open_openblas(why) != nullptr; }
constexpr CpuPeer kPeers[] = {{"matmul", "openblas", no_openblas, nullptr, nullptr}};
#endif

}  // namespace

json cpu_half(const device::Op& op, const device::Sizes& sizes, const Settings& s) {
  if (!op.cpu_fp32) return {{"skipped", cat("the op '", op.name, "' registers no CPU fp32 path")}};
  cpu::set_num_threads(s.threads);
  Rng rng(s.seed);
  const std::vector<Tensor> inputs = op.make_inputs(sizes, rng);
  CacheFlusher flusher;
  json rows = json::array();
  const Timer first_run;
  const Tensor mine = op.cpu_fp32(sizes, inputs).at(0);
  // At a large --size a run takes many seconds and the timing minutes:
  // said now, rather than silence until the table.
  if (const double seconds = first_run.milliseconds() * 1e-3; seconds >= 5) {
    // time_cpu's runs: a warm-up, then timed ones until min_runs and the budget.
    const int timed = std::min(s.runs, std::max(s.min_runs, int(std::ceil(s.budget_s / seconds))));
    std::printf("cpu: one run of %s took %.1f s; timing it takes about %.0f s more (a warm-up and %d timed run%s), "
                "as long again for each peer library; a smaller --size measures the same rate\n",
                op.name.c_str(), seconds, seconds * (1 + timed), timed, timed == 1 ? "" : "s");
    std::fflush(stdout);
  }
  json row = {{"library", "warpnet"},
              {"what", "the op's CPU version 0 in fp32 (Eigen for matmul)"},
              {"timing", time_cpu([&] { op.cpu_fp32(sizes, inputs); }, s, flusher)}};
  rows.push_back(row);
  std::string no_peer = "no peer library for this op";
  for (const CpuPeer& peer : kPeers) {
    if (op.name != peer.op || !peer.open(cpu::num_threads(), no_peer)) continue;
    no_peer.clear();
    const Deviation d = deviation({peer.run(sizes, inputs)}, {mine});
    json p = {{"library", peer.library},
              {"about", peer.about()},
              {"relative_difference_from_warpnet", std::isnan(d.relative) ? json(nullptr) : json(d.relative)},
              {"timing", time_cpu([&] { peer.run(sizes, inputs); }, s, flusher)}};
    rows.push_back(p);
  }
  json out = {{"threads", cpu::num_threads()}, {"inputs", "fp32 uniform(-1,1)"}, {"rows", rows}};
  if (!no_peer.empty()) out["peer"] = no_peer;
  return out;
}

}  // namespace warpnet::cli::bench
