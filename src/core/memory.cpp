#include "core/memory.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cstdio>

namespace warpnet {

std::string_view name_of(MemTag tag) {
  switch (tag) {
    case MemTag::parameter: return "parameters";
    case MemTag::activation: return "activations";
    case MemTag::gradient: return "gradients";
    case MemTag::optimizer: return "optimizer";
    case MemTag::workspace: return "workspace";
    case MemTag::other: return "other";
  }
  return "?";
}

MemoryTracker& MemoryTracker::instance() {
  static MemoryTracker tracker;
  return tracker;
}

static void bump(MemCounts& c, int64_t delta) {
  c.current += delta;
  c.peak = std::max(c.peak, c.current);
}

void MemoryTracker::add(int64_t delta, MemTag tag, const std::string& layer) {
  std::lock_guard lock(mutex_);
  auto it = layer_index_.find(layer);
  if (it == layer_index_.end()) {
    it = layer_index_.emplace(layer, layers_.size()).first;
    layers_.emplace_back().layer = layer;
  }
  MemRow& row = layers_[it->second];
  bump(row.by_tag[static_cast<int>(tag)], delta);
  bump(row.total, delta);
  bump(total_.by_tag[static_cast<int>(tag)], delta);
  bump(total_.total, delta);
}

void MemoryTracker::on_alloc(int64_t bytes, MemTag tag, const std::string& layer) { add(bytes, tag, layer); }
void MemoryTracker::on_free(int64_t bytes, MemTag tag, const std::string& layer) { add(-bytes, tag, layer); }

MemCounts MemoryTracker::tag(MemTag t) const {
  std::lock_guard lock(mutex_);
  return total_.by_tag[static_cast<int>(t)];
}

MemCounts MemoryTracker::total() const {
  std::lock_guard lock(mutex_);
  return total_.total;
}

std::vector<MemRow> MemoryTracker::layers() const {
  std::lock_guard lock(mutex_);
  return layers_;
}

void MemoryTracker::reset_peaks() {
  std::lock_guard lock(mutex_);
  auto reset = [](MemRow& row) {
    for (auto& c : row.by_tag) c.peak = c.current;
    row.total.peak = row.total.current;
  };
  reset(total_);
  for (auto& row : layers_) reset(row);
}

std::string format_bytes(int64_t bytes) {
  char buf[32];
  double b = static_cast<double>(bytes);
  if (b < 1024) std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else if (b < 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024);
  else if (b < 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2f MiB", b / (1024.0 * 1024));
  else std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024 * 1024));
  return buf;
}

std::string MemoryTracker::report() const {
  std::vector<MemRow> rows = layers();
  MemRow total;
  {
    std::lock_guard lock(mutex_);
    total = total_;
  }
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "  %-12s %12s %12s\n", "tag", "current", "peak");
  out += line;
  for (int t = 0; t < kMemTagCount; ++t) {
    const MemCounts& c = total.by_tag[t];
    if (c.peak == 0) continue;
    std::snprintf(line, sizeof line, "  %-12s %12s %12s\n", std::string(name_of(MemTag(t))).c_str(),
                  format_bytes(c.current).c_str(), format_bytes(c.peak).c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "  %-12s %12s %12s\n", "total", format_bytes(total.total.current).c_str(),
                format_bytes(total.total.peak).c_str());
  out += line;
  out += "  peak by layer:\n";
  std::snprintf(line, sizeof line, "  %-14s", "layer");
  out += line;
  for (int t = 0; t < kMemTagCount; ++t) {
    std::snprintf(line, sizeof line, " %11s", std::string(name_of(MemTag(t))).c_str());
    out += line;
  }
  out += "\n";
  bool unclaimed = false;
  for (const MemRow& row : rows) {
    if (row.total.peak == 0) continue;
    unclaimed = unclaimed || row.layer == MemContext{}.layer;
    std::snprintf(line, sizeof line, "  %-14s", row.layer.c_str());
    out += line;
    for (int t = 0; t < kMemTagCount; ++t) {
      std::snprintf(line, sizeof line, " %11s", format_bytes(row.by_tag[t].peak).c_str());
      out += line;
    }
    out += "\n";
  }
  if (unclaimed) out += cat("  (", MemContext{}.layer, ": made outside any layer or named scope)\n");
  return out;
}

static MemContext& context() {
  thread_local MemContext ctx;
  return ctx;
}

const MemContext& current_mem_context() { return context(); }

MemoryScope::MemoryScope(MemTag tag, std::string layer) : saved_(context()) {
  context().tag = tag;
  context().layer = std::move(layer);
}

MemoryScope::MemoryScope(MemTag tag) : saved_(context()) { context().tag = tag; }

MemoryScope::~MemoryScope() { context() = saved_; }

ValueWidthScope::ValueWidthScope(int64_t bytes) : saved_(context().f32_bytes) {
  WN_CHECK(bytes >= 1 && bytes <= 4, "memory: an f32 value counts 1 to 4 bytes, not ", bytes);
  context().f32_bytes = bytes;
}

ValueWidthScope::~ValueWidthScope() { context().f32_bytes = saved_; }

}  // namespace warpnet
