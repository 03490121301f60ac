#include "nn/loss_scaler.hpp"

#include <algorithm>
#include <cmath>

namespace warpnet::nn {

namespace {
bool all_finite(const Tensor& g) {
  const float* p = g.data<float>();
  for (int64_t i = 0, count = g.numel(); i < count; ++i)
    if (!std::isfinite(p[i])) return false;
  return true;
}
}  // namespace

DynamicLossScaler::DynamicLossScaler(LossScaleOptions options) : options_(options), scale_(options.initial_scale) {
  WN_CHECK(options.initial_scale >= kMinLossScale && options.initial_scale <= kMaxLossScale,
           "loss scaling: the initial scale must be from 2^-24 to 2^64 (", kMinLossScale, " to ", kMaxLossScale,
           "), got ", options.initial_scale);
  WN_CHECK(options.growth_interval >= 1, "loss scaling: the growth interval must be at least 1 step, got ",
           options.growth_interval);
}

bool DynamicLossScaler::unscale_or_skip(const std::vector<Parameter*>& params) {
  for (Parameter* p : params) {
    const Tensor& g = p->var.grad();
    WN_CHECK(!g.defined() || (g.device() == Device::cpu && g.dtype() == DType::f32 && g.is_contiguous()),
             "loss scaling: gradients must be f32 on the CPU, ", p->name, "'s is ", g.describe());
    if (g.defined() && !all_finite(g)) {
      WN_CHECK(scale_ / 2 >= kMinLossScale, "loss scaling: ", p->name, "'s gradient is not finite at a loss scale of ",
               scale_, " (2^", std::ilogb(scale_), "), and halving it would pass 2^-24: the gradients overflow at "
               "any scale, so the run has diverged (a learning rate too high?)");
      scale_ /= 2;
      clean_ = 0;
      ++skipped_;
      return false;
    }
  }
  // 1/S is a power of two while S is one (2^16 halved and doubled): the
  // division is exact unless it lands in fp32's subnormals.
  const float inverse = static_cast<float>(1.0 / scale_);
  for (Parameter* p : params) {
    Tensor& g = p->var.grad();
    if (!g.defined()) continue;
    float* q = g.data<float>();
    for (int64_t i = 0, count = g.numel(); i < count; ++i) q[i] *= inverse;
  }
  if (++clean_ >= options_.growth_interval) {
    scale_ = std::min(scale_ * 2, kMaxLossScale);
    clean_ = 0;
  }
  return true;
}

void DynamicLossScaler::restore(double scale, int64_t clean_steps, int64_t skipped_steps) {
  WN_CHECK(scale >= kMinLossScale && scale <= kMaxLossScale, "loss scaling: a checkpointed scale of ", scale,
           " is outside 2^-24 to 2^64");
  scale_ = scale;
  clean_ = clean_steps;
  skipped_ = skipped_steps;
}

}  // namespace warpnet::nn
