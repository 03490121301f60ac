#include "nn/loss_scaler.hpp"

#include <cmath>

namespace warpnet::nn {

namespace {
bool all_finite(const Tensor& g) {
  const float* p = g.data<float>();
  for (int64_t i = 0; i < g.numel(); ++i)
    if (!std::isfinite(p[i])) return false;
  return true;
}
}  // namespace

DynamicLossScaler::DynamicLossScaler(LossScaleOptions options) : options_(options), scale_(options.initial_scale) {
  WN_CHECK(options.initial_scale > 0 && std::isfinite(options.initial_scale),
           "loss scaling: the initial scale must be positive and finite, got ", options.initial_scale);
  WN_CHECK(options.growth_interval >= 1, "loss scaling: the growth interval must be at least 1 step, got ",
           options.growth_interval);
}

bool DynamicLossScaler::unscale_or_skip(const std::vector<Parameter*>& params) {
  for (Parameter* p : params) {
    const Tensor& g = p->var.grad();
    WN_CHECK(!g.defined() || (g.device() == Device::cpu && g.dtype() == DType::f32 && g.is_contiguous()),
             "loss scaling: gradients must be f32 on the CPU, ", p->name, "'s is ", g.describe());
    if (g.defined() && !all_finite(g)) {
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
    for (int64_t i = 0; i < g.numel(); ++i) q[i] *= inverse;
  }
  if (++clean_ >= options_.growth_interval) {
    scale_ *= 2;
    clean_ = 0;
  }
  return true;
}

void DynamicLossScaler::restore(double scale, int64_t clean_steps, int64_t skipped_steps) {
  WN_CHECK(scale > 0 && std::isfinite(scale), "loss scaling: a checkpointed scale of ", scale, " is not usable");
  scale_ = scale;
  clean_ = clean_steps;
  skipped_ = skipped_steps;
}

}  // namespace warpnet::nn
