#include "simt/trace.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "simt/symbols.hpp"

namespace warpnet::simt {

unsigned sectors_touched(const std::array<uintptr_t, 32>& addresses, unsigned mask, unsigned bytes) {
  // Up to bytes/32 + 2 sectors a lane (a range access of a struct can be wide).
  thread_local std::vector<uintptr_t> sectors;
  sectors.clear();
  for (unsigned l = 0; l < 32; ++l) {
    if (!(mask >> l & 1)) continue;
    for (uintptr_t s = addresses[l] / 32; s <= (addresses[l] + bytes - 1) / 32; ++s) sectors.push_back(s);
  }
  std::sort(sectors.begin(), sectors.end());
  return unsigned(std::unique(sectors.begin(), sectors.end()) - sectors.begin());
}

unsigned ideal_sectors(const std::array<uintptr_t, 32>& addresses, unsigned mask, unsigned bytes) {
  // The distinct bytes asked for (a broadcast asks for few), packed densely.
  std::array<std::pair<uintptr_t, uintptr_t>, 32> ranges;
  unsigned n = 0;
  for (unsigned l = 0; l < 32; ++l)
    if (mask >> l & 1) ranges[n++] = {addresses[l], addresses[l] + bytes};
  std::sort(ranges.begin(), ranges.begin() + n);
  uintptr_t distinct = 0, covered_to = 0;
  for (unsigned i = 0; i < n; ++i) {
    const uintptr_t from = std::max(ranges[i].first, covered_to);
    if (ranges[i].second > from) distinct += ranges[i].second - from;
    covered_to = std::max(covered_to, ranges[i].second);
  }
  return unsigned((distinct + 31) / 32);
}

namespace {

// Shared memory serves a warp's access in passes of 128 bytes: the whole
// warp for 4 bytes a lane or fewer, a half warp for 8, a quarter for 16.
// A range of another size (a struct copied whole) takes 32 / (its words, at
// most 4) lanes a pass: 10 for 12 bytes, the last pass lanes 30 and 31.
// The lanes of one pass: [first, first + n).
unsigned lanes_per_pass(unsigned bytes) { return 32 / std::clamp(bytes / 4, 1u, 4u); }

unsigned lanes_in_pass(unsigned mask, unsigned first, unsigned n) {
  const uint64_t pass = ((uint64_t(1) << n) - 1) << first;
  return unsigned(__builtin_popcountll(mask & pass));
}

}  // namespace

unsigned shared_wavefronts(const std::array<uintptr_t, 32>& addresses, unsigned mask, unsigned bytes) {
  // 32 banks of 4-byte words; lanes reading the same word share it (broadcast).
  const unsigned words = std::max(1u, (bytes + 3) / 4), n = lanes_per_pass(bytes);
  unsigned total = 0;
  for (unsigned first = 0; first < 32; first += n) {
    if (!lanes_in_pass(mask, first, n)) continue;
    std::set<uintptr_t> per_bank[32];
    for (unsigned l = first; l < std::min(first + n, 32u); ++l) {
      if (!(mask >> l & 1)) continue;
      for (unsigned w = 0; w < words; ++w) {
        const uintptr_t word = addresses[l] / 4 + w;
        per_bank[word % 32].insert(word);
      }
    }
    size_t worst = 1;
    for (const auto& bank : per_bank) worst = std::max(worst, bank.size());
    total += unsigned(worst);
  }
  return total;
}

unsigned ideal_shared_wavefronts(unsigned mask, unsigned bytes) {
  // Each pass with an active lane takes at least one wavefront, and one per
  // 128 bytes its lanes ask for.
  const unsigned n = lanes_per_pass(bytes);
  unsigned total = 0;
  for (unsigned first = 0; first < 32; first += n)
    total += (lanes_in_pass(mask, first, n) * std::max(bytes, 4u) + 127) / 128;
  return total;
}

InstructionStats KernelTrace::total(Space space, bool write) const {
  InstructionStats sum;
  sum.space = space;
  sum.write = write;
  for (const InstructionStats& s : instructions) {
    if (s.space != space || s.write != write) continue;
    sum.requests += s.requests;
    sum.active_lanes += s.active_lanes;
    sum.inactive_lanes += s.inactive_lanes;
    sum.sectors += s.sectors;
    sum.ideal_sectors += s.ideal_sectors;
    sum.wavefronts += s.wavefronts;
    sum.ideal_wavefronts += s.ideal_wavefronts;
    sum.worst_wavefronts = std::max(sum.worst_wavefronts, s.worst_wavefronts);
  }
  return sum;
}

namespace {

const char* space_name(Space s) { return s == Space::global ? "global" : "shared"; }

double ratio(uint64_t a, uint64_t b) { return b == 0 ? 0.0 : double(a) / double(b); }

nlohmann::json summary(const InstructionStats& s) {
  nlohmann::json j{{"requests", s.requests},
                   {"active_lanes_per_request", ratio(s.active_lanes, s.requests)},
                   {"inactive_lanes_per_request", ratio(s.inactive_lanes, s.requests)}};
  if (s.space == Space::global) {
    j["sectors"] = s.sectors;
    j["ideal_sectors"] = s.ideal_sectors;
    j["sectors_per_request"] = ratio(s.sectors, s.requests);
    j["efficiency"] = ratio(s.ideal_sectors, s.sectors);
  } else {
    j["wavefronts"] = s.wavefronts;
    j["ideal_wavefronts"] = s.ideal_wavefronts;
    j["conflict_degree"] = ratio(s.wavefronts, s.ideal_wavefronts);
    j["worst_wavefronts"] = s.worst_wavefronts;
  }
  return j;
}

}  // namespace

nlohmann::json KernelTrace::to_json() const {
  const auto dim = [](dim3 d) { return nlohmann::json::array({d.x, d.y, d.z}); };
  nlohmann::json j;
  j["kernel"] = kernel;
  j["grid"] = dim(shape.grid);
  j["block"] = dim(shape.block);
  j["dynamic_shared_bytes"] = shape.dynamic_shared;
  j["warps"] = warps;
  uint64_t requests = 0;
  for (const auto& s : instructions) requests += s.requests;
  j["memory_instructions_per_warp"] = ratio(requests, warps);
  // Divergence: the share of lane slots that sat out a warp's memory instruction.
  uint64_t active = 0, inactive = 0;
  for (const auto& s : instructions) active += s.active_lanes, inactive += s.inactive_lanes;
  j["divergence"] = ratio(inactive, active + inactive);
  j["global_load"] = summary(total(Space::global, false));
  j["global_store"] = summary(total(Space::global, true));
  j["shared_load"] = summary(total(Space::shared, false));
  j["shared_store"] = summary(total(Space::shared, true));
  j["tma_copies"] = bulk_copies;
  j["tma_bytes"] = bulk_bytes;
  j["tma_largest_copy_bytes"] = bulk_largest;
  j["blocks"] = blocks;
  j["barriers"] = barriers;
  j["warp_collectives"] = warp_collectives;
  j["atomics"] = atomics;
  j["instructions"] = nlohmann::json::array();
  for (const InstructionStats& s : instructions) {
    nlohmann::json i = summary(s);
    i["where"] = describe_code(s.pc);
    i["space"] = space_name(s.space);
    i["kind"] = s.write ? "store" : "load";
    i["bytes"] = s.bytes;
    j["instructions"].push_back(i);
  }
  j["samples"] = nlohmann::json::array();
  for (const WarpAccess& a : samples) {
    nlohmann::json lanes = nlohmann::json::array();
    for (unsigned l = 0; l < 32; ++l) lanes.push_back(a.mask >> l & 1 ? nlohmann::json(a.addresses[l]) : nlohmann::json());
    j["samples"].push_back({{"block", dim(a.block)}, {"warp", a.warp}, {"where", describe_code(a.pc)},
                            {"space", space_name(a.space)}, {"kind", a.write ? "store" : "load"},
                            {"bytes", a.bytes}, {"addresses", lanes}, {"sectors", a.sectors},
                            {"wavefronts", a.wavefronts}});
  }
  return j;
}

namespace {
std::mutex last_mutex;  // guards `last` and `recorders`
std::optional<KernelTrace> last;
std::vector<TraceRecorder*> recorders;  // alive, in construction order
}  // namespace

TraceRecorder::TraceRecorder() {
  std::lock_guard lock(last_mutex);
  recorders.push_back(this);
}

TraceRecorder::~TraceRecorder() {
  std::lock_guard lock(last_mutex);
  recorders.erase(std::find(recorders.begin(), recorders.end(), this));
}

std::vector<KernelTrace> TraceRecorder::launches() const {
  std::lock_guard lock(mutex_);
  return launches_;
}

std::vector<KernelTrace> TraceRecorder::by_kernel(std::vector<int>* counts) const {
  std::vector<KernelTrace> out;
  std::vector<int> n;
  for (const KernelTrace& t : launches()) {
    auto it = std::find_if(out.begin(), out.end(), [&](const KernelTrace& k) { return k.kernel == t.kernel; });
    if (it == out.end()) {
      out.push_back(t);
      n.push_back(1);
    } else {
      it->add(t);
      ++n[size_t(it - out.begin())];
    }
  }
  if (counts) *counts = std::move(n);
  return out;
}

std::optional<KernelTrace> last_trace() {
  std::lock_guard lock(last_mutex);
  return last;
}

TraceSink::TraceSink(std::string kernel, const LaunchShape& shape) {
  trace_.kernel = std::move(kernel);
  trace_.shape = shape;
  const uint64_t threads = uint64_t(shape.block.x) * shape.block.y * shape.block.z;
  trace_.warps = (threads + 31) / 32 * shape.grid.x * shape.grid.y * shape.grid.z;
}

void KernelTrace::add(const std::vector<InstructionStats>& stats, const std::vector<WarpAccess>& more_samples) {
  for (const InstructionStats& s : stats) {
    auto it = std::lower_bound(instructions.begin(), instructions.end(), s.pc,
                               [](const InstructionStats& a, const void* pc) { return a.pc < pc; });
    if (it == instructions.end() || it->pc != s.pc) {
      instructions.insert(it, s);
      continue;
    }
    it->requests += s.requests;
    it->active_lanes += s.active_lanes;
    it->inactive_lanes += s.inactive_lanes;
    it->sectors += s.sectors;
    it->ideal_sectors += s.ideal_sectors;
    it->wavefronts += s.wavefronts;
    it->ideal_wavefronts += s.ideal_wavefronts;
    it->worst_wavefronts = std::max(it->worst_wavefronts, s.worst_wavefronts);
  }
  for (const WarpAccess& a : more_samples) {
    if (samples.size() >= kMaxSamples) break;
    samples.push_back(a);
  }
}

void KernelTrace::add(const KernelTrace& other) {
  add(other.instructions, other.samples);
  warps += other.warps;
  bulk_copies += other.bulk_copies;
  bulk_bytes += other.bulk_bytes;
  bulk_largest = std::max(bulk_largest, other.bulk_largest);
  blocks += other.blocks;
  barriers += other.barriers;
  warp_collectives += other.warp_collectives;
  atomics += other.atomics;
}

void TraceSink::add(const std::vector<InstructionStats>& stats, std::vector<WarpAccess>& samples) {
  std::lock_guard lock(mutex_);
  traced_ = true;
  trace_.add(stats, samples);
}

void TraceSink::add_bulk(uint64_t copies, uint64_t bytes, uint64_t largest) {
  std::lock_guard lock(mutex_);
  trace_.bulk_copies += copies;
  trace_.bulk_bytes += bytes;
  trace_.bulk_largest = std::max(trace_.bulk_largest, largest);
}

void TraceSink::add_block_counts(uint64_t barriers, uint64_t warp_collectives, uint64_t atomics) {
  std::lock_guard lock(mutex_);
  ++trace_.blocks;
  trace_.barriers += barriers;
  trace_.warp_collectives += warp_collectives;
  trace_.atomics += atomics;
}

void TraceSink::publish() {
  std::lock_guard lock(last_mutex);
  last = trace_;
  for (TraceRecorder* r : recorders) {
    std::lock_guard own(r->mutex_);
    r->launches_.push_back(trace_);
  }
}

}  // namespace warpnet::simt
