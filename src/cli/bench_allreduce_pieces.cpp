// `warpnet bench allreduce`'s calibration and timing: see bench_allreduce_pieces.hpp.
#include "cli/bench_allreduce_pieces.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

#include "core/error.hpp"
#include "core/stats.hpp"
#include "dist/communicator.hpp"

namespace warpnet::cli::bench {

namespace {

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

std::vector<Timing> time_interleaved(const TimingBudget& b, const std::vector<TimedOp>& ops) {
  auto one_run = [](const TimedOp& op) {
    if (op.prepare) op.prepare();
    dist::barrier();
    const double t0 = dist::wtime();
    op.run_once();
    return dist::wtime() - t0;
  };
  std::vector<int64_t> runs;
  for (const TimedOp& op : ops) {
    one_run(op);
    one_run(op);
    const double probe = median({one_run(op), one_run(op), one_run(op)});
    runs.push_back(std::clamp<int64_t>(int64_t(b.budget_s / std::max(probe, 1e-9)), b.min_runs, b.max_runs));
  }
  dist::broadcast(runs.data(), runs.size() * sizeof(int64_t));
  std::vector<std::vector<double>> times(ops.size());
  for (int block = 0; block < kBlocks; ++block)
    for (size_t i = 0; i < ops.size(); ++i)
      for (int64_t r = runs[i] * block / kBlocks; r < runs[i] * (block + 1) / kBlocks; ++r)
        times[i].push_back(one_run(ops[i]));
  std::vector<Timing> out;
  for (size_t i = 0; i < ops.size(); ++i) {
    double stats[2] = {median(times[i]), *std::min_element(times[i].begin(), times[i].end())};
    dist::allreduce_max(stats, 2);
    out.push_back({runs[i], stats[0], stats[1]});
  }
  return out;
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

PieceBuffers::PieceBuffers(float* vector, int64_t vector_floats, float* temporary, int64_t temporary_floats)
    : vector(vector),
      temporary(temporary),
      vector_floats(vector_floats),
      temporary_floats(temporary_floats),
      rank(dist::rank()),
      peer((dist::rank() + 1) % dist::size()) {  // the ring's right neighbour; with 2 ranks, the other
  WN_CHECK(dist::size() == 2, "bench allreduce: the loopback model is calibrated on 2 ranks (", dist::size(),
           " here): each rank exchanges with one neighbour");
}

void time_round_cost(PieceBuffers& b, const TimingBudget& budget, dist::PieceTimings& t) {
  dist::set_activity("bench allreduce, calibration: empty exchange and barrier");
  const std::vector<Timing> times = time_interleaved(
      budget, {{[&] { dist::exchange(b.vector, b.temporary, 0, b.peer); }, {}}, {[] { dist::barrier(); }, {}}});
  t.empty_exchange_s = times[0].median_s;
  t.ibarrier_s = times[1].median_s;
}

Timing time_with_pieces(PieceBuffers& b, double message_bytes, const TimedOp& allreduce, const TimingBudget& budget,
                        dist::PieceTimings& t) {
  const int64_t count = static_cast<int64_t>(message_bytes) / int64_t(sizeof(float));
  const int64_t bytes = count * int64_t(sizeof(float));
  WN_CHECK(2 * count <= b.vector_floats && count <= b.temporary_floats, "bench allreduce: calibration size ",
           message_bytes, " bytes exceeds the buffers");
  // Each piece is one step of the ring, timed alone on the ring's own
  // buffers: D this rank's own segment of the vector, S the other segment,
  // T the temporary buffer. A 2-rank call is
  //
  //   X₁: send S, receive into T;   R: reduce T into D;   X: send D, receive into S
  //
  // and each piece is prepared, untimed, by the steps that come before it in
  // a run of all-reduces, because the state they leave the buffers in
  // decides what a step costs between two cores: X sends D, which this rank
  // has just written, and receives into S, which the peer has just read
  // (writing a line another core holds first takes it away from that core);
  // R reduces into D, which the peer read in the previous call's X; X₁
  // receives into T, which only this rank touches. Timed on buffers nobody
  // else touched, the exchange measured up to 2x and the reduction up to 3x
  // faster than inside the ring (64 KiB to 1 MiB); timed like X, X₁ came out
  // up to 3.7x slower than inside it (128 KiB on a 2-core AMD EPYC VM,
  // 2026-12-03: 89 against 24 us). Each run also touches the ring's 3m per
  // rank: an exchange that turned over two buffers ran faster than the
  // ring's from 8 MiB on, where the ring's 6m for two ranks outgrows a
  // 32 MiB L3 and 4m does not yet (2026-12-01).
  const int peer = b.peer;
  float *const own = b.own(count), *const other = b.other(count), *const temporary = b.temporary;
  const auto first_exchange = [=] { dist::exchange(other, temporary, bytes, peer); };
  const auto reduction = [=] { dist::reduce_local_sum(temporary, own, count); };
  const auto second_exchange = [=] { dist::exchange(own, other, bytes, peer); };
  // libnbc's temporary buffer: malloc of the whole vector (2m) at every
  // call. Below glibc's mmap threshold the heap block is reused; from it on
  // the block is mapped fresh, and X₁ is timed receiving into one.
  const bool fresh = 2 * message_bytes >= dist::LoopbackModel::kMmapThresholdBytes;
  const auto fresh_first_exchange = [=] {
    void* buffer = std::malloc(static_cast<size_t>(2 * bytes));
    WN_CHECK(buffer, "bench allreduce: out of memory");
    dist::exchange(other, buffer, bytes, peer);
    std::free(buffer);
  };
  const std::vector<TimedOp> ops{
      {fresh ? std::function<void()>(fresh_first_exchange) : first_exchange,
       [=] {
         reduction();
         second_exchange();
       }},
      {reduction,
       [=] {
         second_exchange();
         first_exchange();
       }},
      {second_exchange,
       [=] {
         first_exchange();
         reduction();
       }},
      allreduce};
  const std::vector<Timing> times = time_interleaved(budget, ops);
  (fresh ? t.fresh_exchange : t.temporary_exchange).push_back({message_bytes, times[0].median_s});
  t.reduce.push_back({message_bytes, times[1].median_s});
  t.exchange.push_back({message_bytes, times[2].median_s});
  return times[3];
}

}  // namespace warpnet::cli::bench
