// `warpnet bench allreduce`'s calibration: see bench_allreduce_pieces.hpp.
#include "cli/bench_allreduce_pieces.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

#include "core/error.hpp"
#include "dist/communicator.hpp"

namespace warpnet::cli::bench {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string read_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  return s;
}

// sysfs writes sizes as "48K", "2048K", "260M".
double size_bytes(const std::string& text) {
  if (text.empty()) return 0;
  const double value = std::atof(text.c_str());
  switch (text.back()) {
    case 'K': return value * 1024;
    case 'M': return value * 1024 * 1024;
    case 'G': return value * 1024 * 1024 * 1024;
    default: return value;
  }
}

}  // namespace

Timing time_collectively(const TimingBudget& b, const std::function<void()>& run_once,
                         const std::function<void()>& prepare) {
  auto one_run = [&] {
    if (prepare) prepare();
    dist::barrier();
    const double t0 = dist::wtime();
    run_once();
    return dist::wtime() - t0;
  };
  one_run();
  one_run();
  std::vector<double> probe{one_run(), one_run(), one_run()};
  int64_t runs = std::clamp<int64_t>(int64_t(b.budget_s / std::max(median(probe), 1e-9)), b.min_runs, b.max_runs);
  dist::broadcast(&runs, sizeof runs);
  std::vector<double> times;
  for (int64_t i = 0; i < runs; ++i) times.push_back(one_run());
  double stats[2] = {median(times), *std::min_element(times.begin(), times.end())};
  dist::allreduce_max(stats, 2);
  return {runs, stats[0], stats[1]};
}

CacheInfo read_caches() {
  CacheInfo info;
  const std::filesystem::path root = "/sys/devices/system/cpu/cpu0/cache";
  std::error_code ec;
  std::vector<std::string> lines;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    const std::string type = read_line(entry.path() / "type");
    if (type == "Instruction") continue;
    const std::string level = read_line(entry.path() / "level"), size = read_line(entry.path() / "size");
    info.last_level_bytes = std::max(info.last_level_bytes, size_bytes(size));
    if (level == "2") info.l2_bytes = size_bytes(size);
    lines.push_back(cat("L", level, " ", size, " (cpus ", read_line(entry.path() / "shared_cpu_list"), ")"));
  }
  std::sort(lines.begin(), lines.end());
  for (const std::string& l : lines) info.text += (info.text.empty() ? "" : ", ") + l;
  return info;
}

dist::PieceTimings measure_pieces(std::vector<float>& buffer, const std::vector<double>& message_bytes,
                                  const TimingBudget& budget) {
  const int peer = (dist::rank() + 1) % dist::size();  // the ring's right neighbour; with 2 ranks, the other
  WN_CHECK(dist::size() == 2, "bench allreduce: the loopback model is calibrated on 2 ranks (", dist::size(),
           " here): each rank exchanges with one neighbour");
  // Three regions of the buffer: what is sent, what is received, and the
  // reduction's second operand, never overlapping.
  const int64_t third = static_cast<int64_t>(buffer.size()) / 3;
  float* send = buffer.data();
  float* receive = send + third;
  float* operand = receive + third;
  dist::PieceTimings t;
  dist::set_activity("bench allreduce, calibration: empty exchange and barrier");
  t.empty_exchange_s = time_collectively(budget, [&] { dist::exchange(send, receive, 0, peer); }).median_s;
  t.ibarrier_s = time_collectively(budget, [&] { dist::barrier(); }).median_s;
  for (double bytes : message_bytes) {
    const int64_t count = static_cast<int64_t>(bytes) / int64_t(sizeof(float));
    WN_CHECK(count <= third, "bench allreduce: calibration size ", bytes, " bytes exceeds the buffer");
    dist::set_activity(cat("bench allreduce, calibration at ", bytes, " bytes"));
    // Each piece starts from the state the ring leaves its buffers in, since
    // that decides what a copy costs between two cores: the ring sends
    // memory this rank has just written, receives into memory the peer has
    // just read, and reduces into memory the peer has just read (writing a
    // line another core holds first takes it away from that core). Timed on
    // buffers nobody else touched, the exchange measured up to 2x and the
    // reduction up to 3x faster than inside the ring (64 KiB to 1 MiB).
    // So the exchange swaps its two buffers before every run — what was
    // received (written here) is sent next, what the peer read is received
    // into — and the reduction's destination is first sent to the peer and
    // its operand received, untimed, as in the ring's first round.
    float* out = send;
    float* in = receive;
    const Timing exchanged = time_collectively(
        budget, [&] { dist::exchange(out, in, count * int64_t(sizeof(float)), peer); },
        [&] { std::swap(out, in); });
    t.exchange.push_back({bytes, exchanged.median_s});
    t.reduce.push_back({bytes, time_collectively(
                                   budget, [&] { dist::reduce_local_sum(operand, receive, count); },
                                   [&] { dist::exchange(receive, operand, count * int64_t(sizeof(float)), peer); })
                                   .median_s});
    // libnbc's temporary buffer: malloc of the whole vector (2m), the first
    // round receives m bytes into it, free. Below glibc's mmap threshold the
    // heap block is reused and warm, which the exchange above measures.
    if (2 * bytes >= dist::LoopbackModel::kMmapThresholdBytes)
      t.fresh_exchange.push_back({bytes, time_collectively(budget, [&] {
                                         void* fresh = std::malloc(static_cast<size_t>(2 * bytes));
                                         WN_CHECK(fresh, "bench allreduce: out of memory");
                                         dist::exchange(send, fresh, count * int64_t(sizeof(float)), peer);
                                         std::free(fresh);
                                       }).median_s});
  }
  return t;
}

}  // namespace warpnet::cli::bench
