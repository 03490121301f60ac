// Lesson 03, part 8: a memory-bound ladder, the softmax, seen through the
// emulator's traces and the GPU records of bench/results.
//
// A softmax does a handful of operations per element and must read each
// logit and write each probability: its time is its memory traffic. Each
// registered version runs traced at one size and is checked against the CPU
// reference; the trace gives the bytes its instructions ask for per element
// (passes over the row), how its warps' loads fall into 32-byte sectors, the
// widest access, and its shared-memory traffic. The newest GPU record then
// gives each version's share of the device-to-device copy bandwidth measured
// in the same run: the ceiling for a kernel that reads and writes each byte once.
#include "lessons/03-simt-threads-warps-blocks/softmax_ladder.hpp"

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "device/registry.hpp"
#include "device/run.hpp"
#include "lessons/bench_records.hpp"
#include "lessons/lesson_checks.hpp"
#include "simt/launch.hpp"
#include "simt/trace.hpp"

namespace warpnet::lesson03 {
namespace {

using lesson::expect;
using lesson::field;
using lesson::fixed;
using simt::Space;

double ratio(double a, double b) { return b ? a / b : 0.0; }

// What one version's trace says.
struct Figures {
  const device::Kernel* kernel = nullptr;
  bool matches = false;
  double bytes_per_element = 0;  // global bytes asked for (loads + stores) per element of Z
  double load_efficiency = 0;    // the fewest sectors that hold the bytes loaded / sectors touched
  unsigned widest_load = 0;      // bytes per lane
  double shared_per_row = 0;     // warp-level shared-memory requests per row
  double barriers_per_row = 0;   // __syncthreads() released
  double shuffles_per_row = 0;   // warp-level shuffles and votes
  double instructions_per_warp = 0;
};

Figures trace(const device::Kernel& kernel, const device::Sizes& sizes) {
  Rng rng(3);
  const auto inputs = device::make_inputs(kernel, sizes, rng);
  const auto out = device::run_emulated(kernel, sizes, inputs);
  const auto t = simt::last_trace();
  WN_CHECK(t.has_value(), kernel.id(), " left no trace");
  Figures f;
  f.kernel = &kernel;
  f.matches = device::compare(kernel, sizes, inputs, out).mismatches == 0;
  const auto load = t->total(Space::global, false);
  f.load_efficiency = ratio(double(load.ideal_sectors), double(load.sectors));
  double bytes = 0, requests = 0;
  for (const auto& i : t->instructions) {
    requests += double(i.requests);
    if (i.space == Space::shared) {
      f.shared_per_row += double(i.requests);
      continue;
    }
    bytes += double(i.active_lanes) * i.bytes;
    if (!i.write) f.widest_load = std::max(f.widest_load, i.bytes);
  }
  f.bytes_per_element = bytes / double(sizes[0] * sizes[1]);
  f.shared_per_row /= double(sizes[0]);
  f.barriers_per_row = double(t->barriers) / double(sizes[0]);
  f.shuffles_per_row = double(t->warp_collectives) / double(sizes[0]);
  f.instructions_per_warp = ratio(requests, double(t->warps));
  return f;
}

void print_trace_table(const std::vector<Figures>& all, const device::Sizes& sizes, bool markdown) {
  if (markdown)
    std::printf("| version | bytes asked / element | load efficiency | widest load | shared requests / row | "
                "barriers / row | shuffles / row | memory instr. / warp |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
  else
    std::printf("   %-28s %13s %10s %7s %11s %13s %13s %11s\n", "version", "bytes/element", "load effic", "widest",
                "shared/row", "barriers/row", "shuffles/row", "instr/warp");
  for (const Figures& f : all) {
    const std::string efficiency = fixed(100 * f.load_efficiency, 1) + "%";
    const std::string widest = std::to_string(f.widest_load) + " B";
    if (markdown)
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", f.kernel->id().c_str(),
                  fixed(f.bytes_per_element, 2).c_str(), efficiency.c_str(), widest.c_str(),
                  fixed(f.shared_per_row, 1).c_str(), fixed(f.barriers_per_row, 1).c_str(),
                  fixed(f.shuffles_per_row, 1).c_str(), fixed(f.instructions_per_warp, 0).c_str());
    else
      std::printf("   %-28s %13.2f %10s %7s %11.1f %13.1f %13.1f %11.0f\n", f.kernel->id().c_str(),
                  f.bytes_per_element, efficiency.c_str(), widest.c_str(), f.shared_per_row, f.barriers_per_row,
                  f.shuffles_per_row, f.instructions_per_warp);
  }
  if (markdown)
    std::printf("\nTraced on the emulator at %s (`build/bin/lesson03 --markdown`); counts, not times, so any machine "
                "prints the same table.\n",
                device::describe_sizes(device::op("softmax"), sizes).c_str());
}

// The chapter's claims about the traces: three passes, then two, then one;
// v1's lanes on different rows; shuffles in place of shared memory.
void check_claims(const std::map<int, Figures>& v) {
  for (const auto& [version, f] : v) expect(f.matches, f.kernel->id() + " matches the CPU reference");
  const auto has = [&](int version) { return v.count(version) == 1; };
  for (int version : {1, 2, 3})
    if (has(version))
      expect(v.at(version).bytes_per_element == 16, v.at(version).kernel->id() +
                                                        " asks for 16 bytes an element: Z read three times, P written");
  for (int version : {4, 5})
    if (has(version))
      expect(v.at(version).bytes_per_element == 12, v.at(version).kernel->id() + " asks for 12: Z read twice");
  if (has(6)) expect(v.at(6).bytes_per_element == 8, "v6 asks for 8 bytes an element: Z read once, P written");
  if (has(1)) expect(v.at(1).load_efficiency <= 0.125, "v1's lanes read 32 rows at once: one sector per 4 bytes");
  for (const auto& [version, f] : v)
    if (version >= 2) expect(f.load_efficiency == 1.0, f.kernel->id() + "'s loads are coalesced: the fewest sectors");
  if (has(2) && has(3)) {
    expect(v.at(3).shared_per_row < v.at(2).shared_per_row / 3,
           "v3's shuffles leave under a third of v2's shared-memory requests (a value per warp, not per thread)");
    expect(v.at(2).shuffles_per_row == 0 && v.at(3).barriers_per_row * 4 < v.at(2).barriers_per_row,
           "v2 reduces with barriers alone; v3's shuffles leave it under a quarter of v2's barriers");
  }
  for (int version : {5, 6})
    if (has(version)) {
      expect(v.at(version).shared_per_row == 0 && v.at(version).barriers_per_row == 0,
             v.at(version).kernel->id() + " reduces a row with shuffles alone: no shared memory, no barrier");
      expect(v.at(version).widest_load == 16, v.at(version).kernel->id() + " loads a float4 per lane");
    }
}

// The newest `warpnet bench` record from a GPU that timed the softmax: each
// version's share of the in-run copy bandwidth at every size it ran, beside
// the bytes per element its trace asked for. A line saying there is none
// otherwise (GPU figures come only from a GPU).
// The record's softmax tables that a GPU timed (none: not a GPU's `warpnet
// bench` record, or no softmax in it).
std::vector<const nlohmann::json*> softmax_tables(const nlohmann::json& record) {
  std::vector<const nlohmann::json*> found;
  if (!lesson::is_gpu_bench_record(record)) return found;
  for (const nlohmann::json& op : field(record, "ops"))
    if (op.value("op", "") == "softmax" && field(op, "gpu").contains("kernels")) found.push_back(&op);
  return found;
}

void print_gpu_table(const std::map<int, Figures>& traced) {
  namespace fs = std::filesystem;
  std::optional<lesson::BenchRecord> newest;  // by the date the record states, the later file on a tie
  lesson::show_each_record([&](const lesson::BenchRecord& r) {
    if (!softmax_tables(r.json).empty() &&
        (!newest || r.json.value("date", "") >= newest->json.value("date", "")))
      newest = r;
  });
  if (!newest) {
    std::printf("\nNo GPU has run the softmax yet: bench/results/ holds no `warpnet bench softmax` record from one. "
                "Figures appear here from `scripts/gpu-check.sh` on a real GPU; they are never estimated.\n");
    return;
  }
  const std::vector<const nlohmann::json*> ops = softmax_tables(newest->json);
  const nlohmann::json& gpu = field(newest->json, "gpu");
  std::printf("\n**%s**, %s, `%s` (`warpnet bench softmax`): each version's rate, counting the 8 bytes an element a "
              "softmax must move, as a share of the device-to-device copy bandwidth measured in the same run",
              gpu.value("name", "?").c_str(), newest->json.value("date", "?").c_str(),
              fs::relative(newest->file, WARPNET_SOURCE_DIR).c_str());
  for (const nlohmann::json* op : ops)
    std::printf("; at %s: %s GB/s", field(*op, "sizes").dump().c_str(),
                lesson::record_number(field(field(field(*op, "gpu"), "copy"), "gbps"), 0).c_str());
  std::printf(":\n\n| version | bytes asked / element (trace) |");
  for (const nlohmann::json* op : ops) std::printf(" %% of copy at %s |", field(*op, "sizes").dump().c_str());
  std::printf("\n|---|---:|");
  for (size_t i = 0; i < ops.size(); ++i) std::printf("---:|");
  std::printf("\n");
  // One row per version, in the order of the first size's table.
  for (const nlohmann::json& k : field(field(*ops.front(), "gpu"), "kernels")) {
    const std::string id = k.value("kernel", "?");
    const int version = k.value("version", -1);
    std::printf("| %s | %s |", id.c_str(),
                traced.count(version) ? fixed(traced.at(version).bytes_per_element, 0).c_str() : "-");
    for (const nlohmann::json* op : ops) {
      std::string share = "-";
      for (const nlohmann::json& other : field(field(*op, "gpu"), "kernels"))
        if (other.value("kernel", "") == id && other.value("status", "") == "ok")
          share = lesson::record_number(field(other, "percent_of_copy"), 1);
      std::printf(" %s |", share.c_str());
    }
    std::printf("\n");
  }
}

}  // namespace

void softmax_ladder(bool markdown) {
  // 64 rows of 1024: v6 gives a row one warp (8 float4s a lane), v5 a
  // 32-lane group; v2-v4 a block of 256 threads per row.
  const device::Sizes sizes{64, 1024};
  if (!markdown)
    std::printf("\n8. A memory-bound ladder: every softmax version of the registry, traced on the emulator at %s\n",
                device::describe_sizes(device::op("softmax"), sizes).c_str());
  std::vector<Figures> all;
  std::map<int, Figures> by_version;
  for (const device::Kernel* k : device::kernels(device::Copy::traced)) {
    if (k->op != "softmax" || !k->emulator) continue;
    all.push_back(trace(*k, sizes));
    by_version.emplace(k->version, all.back());
  }
  print_trace_table(all, sizes, markdown);
  check_claims(by_version);
  print_gpu_table(by_version);
}

}  // namespace warpnet::lesson03
