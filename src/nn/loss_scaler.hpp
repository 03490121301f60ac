// Dynamic loss scaling for fp16 training.
//
// fp16's smallest normal is 2^-14 (6.1e-5) and its subnormals end at 2^-24:
// many gradients of a trained network are smaller and would round to zero
// when the gradient entering a matmul/conv backward is cast to fp16. The fix
// is to multiply the loss by a large scale S before backward, so every
// gradient is S times larger and lands in fp16's range, and to divide the
// fp32 master gradients by S again before the optimizer step. Too large an S
// overflows fp16 (past 65504 a value becomes inf): then the step is skipped
// and S halved. After `growth_interval` clean steps in a row S is doubled
// again, so it hovers near the largest scale that does not overflow.
//
// bf16 needs none of this: it has fp32's 8 exponent bits, so any gradient an
// fp32 network produces is in its range; it only has fewer mantissa bits.
#pragma once
#include <cstdint>
#include <vector>

#include "nn/module.hpp"

namespace warpnet::nn {

// The scales a run may use. Above 2^64 every fp16 gradient overflows (its
// range ends at 2^16), and 1/S must stay a normal fp32 number; below 2^-24
// a gradient that still overflows is not a scaling problem: the run stops
// there, saying so, rather than skipping every step that follows.
inline constexpr double kMinLossScale = 1.0 / (1 << 24);         // 2^-24
inline constexpr double kMaxLossScale = 18446744073709551616.0;  // 2^64

struct LossScaleOptions {
  double initial_scale = 65536;  // 2^16
  int64_t growth_interval = 2000;
};

class DynamicLossScaler {
 public:
  explicit DynamicLossScaler(LossScaleOptions options = {});

  // What backward seeds d(loss)/d(loss) with.
  double scale() const { return scale_; }
  // After a backward seeded with scale(): when every gradient of `params` is
  // finite, divides them by the scale, counts a clean step (doubling the
  // scale after growth_interval of them) and returns true: take the step.
  // Otherwise halves the scale and returns false: skip the optimizer step
  // (an error when the scale would fall below kMinLossScale). Doubling
  // stops at kMaxLossScale.
  bool unscale_or_skip(const std::vector<Parameter*>& params);

  int64_t skipped_steps() const { return skipped_; }
  int64_t clean_steps() const { return clean_; }  // since the scale last changed
  // Checkpoints: the scale and the two counters.
  void restore(double scale, int64_t clean_steps, int64_t skipped_steps);

 private:
  LossScaleOptions options_;
  double scale_;
  int64_t clean_ = 0, skipped_ = 0;
};

}  // namespace warpnet::nn
