// `warpnet bench allreduce`'s calibration and timing: see bench_allreduce_pieces.hpp.
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

PieceBuffers::PieceBuffers(std::vector<float>& buffer)
    : capacity_floats(static_cast<int64_t>(buffer.size()) / 3),
      send(buffer.data()),
      receive(send + capacity_floats),
      operand(receive + capacity_floats),
      peer((dist::rank() + 1) % dist::size()) {  // the ring's right neighbour; with 2 ranks, the other
  WN_CHECK(dist::size() == 2, "bench allreduce: the loopback model is calibrated on 2 ranks (", dist::size(),
           " here): each rank exchanges with one neighbour");
}

void time_round_cost(PieceBuffers& b, const TimingBudget& budget, dist::PieceTimings& t) {
  dist::set_activity("bench allreduce, calibration: empty exchange and barrier");
  const std::vector<Timing> times = time_interleaved(
      budget, {{[&] { dist::exchange(b.send, b.receive, 0, b.peer); }, {}}, {[] { dist::barrier(); }, {}}});
  t.empty_exchange_s = times[0].median_s;
  t.ibarrier_s = times[1].median_s;
}

Timing time_with_pieces(PieceBuffers& b, double message_bytes, const TimedOp& allreduce, const TimingBudget& budget,
                        dist::PieceTimings& t) {
  const int64_t count = static_cast<int64_t>(message_bytes) / int64_t(sizeof(float));
  const int64_t bytes = count * int64_t(sizeof(float));
  WN_CHECK(count <= b.capacity_floats, "bench allreduce: calibration size ", message_bytes, " bytes exceeds the buffer");
  // Each piece starts from the state the ring leaves its buffers in, since
  // that decides what a copy costs between two cores: the ring sends memory
  // this rank has just written, receives into memory the peer has just
  // read, and reduces into memory the peer has just read (writing a line
  // another core holds first takes it away from that core). Timed on
  // buffers nobody else touched, the exchange measured up to 2x and the
  // reduction up to 3x faster than inside the ring (64 KiB to 1 MiB). So the
  // exchange swaps its two buffers before every run — what was received
  // (written here) is sent next, what the peer read is received into — and
  // the reduction is prepared, untimed, by the two exchanges that come
  // before it in a run of all-reduces: the previous call's last round (the
  // destination, this rank's segment, sent to the peer; the other segment
  // received) and this call's first (the other segment sent on, the operand
  // received). One exchange that sent the destination and received the
  // operand at once left a 64 KiB reduction twice as slow as the ring's
  // (14 against 7 us; the all-reduce of 128 KiB predicted 21-37% high).
  //
  // The exchange also turns over three buffers, not two: run k sends buffer
  // k mod 3 (received, so written, in run k-1) and receives into buffer
  // (k+1) mod 3 (sent, so read by the peer, in run k-1), and so touches 3m
  // per rank, as much as the ring does (its vector's 2m, and the m of the
  // temporary buffer the first round receives into). With two buffers it
  // touched 2m: from 8 MiB on, where the ring's 6m for two ranks outgrows a
  // 32 MiB L3 and the exchanges' 4m does not yet, it ran faster than the
  // ring's and the all-reduce of 8 and 16 MiB was predicted 18-20% short in
  // the median (16 MiB beyond 25% in 7 of 20 runs; a 2-core AMD EPYC VM,
  // 2026-12-01).
  float* const turns[3] = {b.send, b.receive, b.operand};
  int turn = 0;
  std::vector<TimedOp> ops{
      {[&] { dist::exchange(turns[turn % 3], turns[(turn + 1) % 3], bytes, b.peer); }, [&] { ++turn; }},
      {[&] { dist::reduce_local_sum(b.operand, b.receive, count); },
       [&] {
         dist::exchange(b.receive, b.send, bytes, b.peer);
         dist::exchange(b.send, b.operand, bytes, b.peer);
       }},
      allreduce};
  // libnbc's temporary buffer: malloc of the whole vector (2m), the first
  // round receives m bytes into it, free. Below glibc's mmap threshold the
  // heap block is reused and warm, which the exchange above measures.
  const bool fresh = 2 * message_bytes >= dist::LoopbackModel::kMmapThresholdBytes;
  if (fresh)
    ops.push_back({[&] {
                     void* buffer = std::malloc(static_cast<size_t>(2 * bytes));
                     WN_CHECK(buffer, "bench allreduce: out of memory");
                     dist::exchange(b.send, buffer, bytes, b.peer);
                     std::free(buffer);
                   },
                   {}});
  const std::vector<Timing> times = time_interleaved(budget, ops);
  t.exchange.push_back({message_bytes, times[0].median_s});
  t.reduce.push_back({message_bytes, times[1].median_s});
  if (fresh) t.fresh_exchange.push_back({message_bytes, times[3].median_s});
  return times[2];
}

}  // namespace warpnet::cli::bench
