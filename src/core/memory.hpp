// The memory tracker: every allocation carries a tag (what the bytes are for)
// and a layer name, so a training step can be split into parameters,
// activations, gradients, optimizer state and workspace, per layer.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace warpnet {

enum class MemTag : uint8_t { parameter, activation, gradient, optimizer, workspace, other };
inline constexpr int kMemTagCount = 6;

std::string_view name_of(MemTag tag);

struct MemCounts {
  int64_t current = 0;
  int64_t peak = 0;
};

// One line of a report: bytes for one layer (or the total), split by tag.
struct MemRow {
  std::string layer;
  std::array<MemCounts, kMemTagCount> by_tag{};
  MemCounts total;
};

// Process-wide and thread-safe; storage objects report to it as they are
// created, retagged and destroyed.
class MemoryTracker {
 public:
  static MemoryTracker& instance();

  void on_alloc(int64_t bytes, MemTag tag, const std::string& layer);
  void on_free(int64_t bytes, MemTag tag, const std::string& layer);

  MemCounts tag(MemTag t) const;
  MemCounts total() const;
  // One row per layer that ever allocated, in first-seen order.
  std::vector<MemRow> layers() const;
  // Peaks restart from the current bytes: measure one phase at a time.
  void reset_peaks();
  // Human-readable table: per tag, then per layer.
  std::string report() const;

 private:
  void add(int64_t delta, MemTag tag, const std::string& layer);
  mutable std::mutex mutex_;
  MemoryTracker() { total_.layer = "total"; }
  MemRow total_;
  std::vector<MemRow> layers_;
  std::map<std::string, size_t, std::less<>> layer_index_;
};

// The tag and layer new tensors get when none is named explicitly.
struct MemContext {
  MemTag tag = MemTag::other;
  std::string layer = "-";
  // Bytes each value of a new f32 tensor counts: 4, or under emulated low
  // precision (autograd/precision.hpp) the width of the format its values
  // are in (bf16 2, fp8 1) while they are kept in fp32 words.
  int64_t f32_bytes = 4;
};
const MemContext& current_mem_context();

// RAII: inside the scope, new tensors are tagged `tag` and charged to `layer`.
class MemoryScope {
 public:
  MemoryScope(MemTag tag, std::string layer);
  explicit MemoryScope(MemTag tag);  // keeps the enclosing layer
  ~MemoryScope();
  MemoryScope(const MemoryScope&) = delete;
  MemoryScope& operator=(const MemoryScope&) = delete;

 private:
  MemContext saved_;
};

// RAII: inside the scope, new f32 tensors count `bytes` per value (tag and
// layer unchanged): what a bf16 or fp8 tensor would take on a GPU.
class ValueWidthScope {
 public:
  explicit ValueWidthScope(int64_t bytes);
  ~ValueWidthScope();
  ValueWidthScope(const ValueWidthScope&) = delete;
  ValueWidthScope& operator=(const ValueWidthScope&) = delete;

 private:
  int64_t saved_;
};

std::string format_bytes(int64_t bytes);  // "1.50 MiB"

}  // namespace warpnet
