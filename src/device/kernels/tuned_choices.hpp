// The winners of an autotuned registration (matmul/10 and 24, lenet5_step/01,
// and the conv versions through conv/autotuned.hpp): the candidate its
// tuner measured fastest, per sizes.
// An anonymous namespace although this is a header, as workspace.hpp: each
// registration file is compiled as three copies (plain, traced, nvcc; see
// copy.hpp) and each copy keeps its own winners. Only the CUDA copy's tuner
// fills them; the emulator's stay empty, so there the tuning table decides.
#pragma once
#include <map>
#include <mutex>
#include <optional>

#include "device/registry.hpp"

namespace warpnet::device {
namespace {

class TunedChoices {
 public:
  std::optional<int> find(const Sizes& s) const {
    const std::lock_guard lock(mutex_);
    if (const auto it = best_.find(s); it != best_.end()) return it->second;
    return std::nullopt;
  }
  void remember(const Sizes& s, int candidate) {
    const std::lock_guard lock(mutex_);
    best_[s] = candidate;
  }

 private:
  mutable std::mutex mutex_;
  std::map<Sizes, int> best_;
};

// The winners of the autotuned version a registration file registers
// (matmul/10, matmul/24, lenet5_step/01): this header's anonymous namespace
// gives every file, in each of its copies, its own.
inline TunedChoices& tuned() {
  static TunedChoices t;
  return t;
}

}  // namespace
}  // namespace warpnet::device
