#include "cli/precision_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace warpnet::cli {

namespace {
constexpr ag::Operand kOperands[] = {ag::Operand::input, ag::Operand::weight, ag::Operand::grad_output};

float amax_over(const std::deque<float>& history) {
  return history.empty() ? 0.0f : *std::max_element(history.begin(), history.end());
}
}  // namespace

nlohmann::json report_precision(const nn::Trainer& trainer, ag::Precision precision, bool print) {
  nlohmann::json r;
  r["name"] = ag::name_of(precision);
  if (const nn::DynamicLossScaler* s = trainer.loss_scaler()) {
    r["loss_scale"] = {{"final_scale", s->scale()}, {"skipped_steps", s->skipped_steps()}};
    if (print)
      std::printf("fp16 loss scaling: final scale %g (2^%.0f), %lld step%s skipped for an overflowing gradient\n",
                  s->scale(), std::log2(s->scale()), static_cast<long long>(s->skipped_steps()),
                  s->skipped_steps() == 1 ? "" : "s");
  }
  const ag::MixedPrecision* policy = trainer.precision_policy();
  if (policy && precision == ag::Precision::fp8) {
    if (print)
      std::printf("fp8 delayed scaling (amax over the last %zu steps, scale = max_finite / (amax · 2^margin), kept "
                  "when that amax is 0 or not finite):\n"
                  "  %-8s %-12s %-5s %12s %12s\n",
                  policy->fp8_scales().empty() ? size_t(0)
                                               : policy->fp8_scales().begin()->second.input.history().size(),
                  "layer", "operand", "fmt", "amax", "scale");
    nlohmann::json layers = nlohmann::json::object();
    for (const auto& [layer, scales] : policy->fp8_scales()) {
      for (ag::Operand o : kOperands) {
        const ag::DelayedScale& d = scales.of(o);
        const float amax = amax_over(d.history());
        layers[layer][std::string(ag::name_of(o))] = {
            {"format", d.format().name}, {"amax", amax}, {"scale", d.scale()}};
        if (print)
          std::printf("  %-8s %-12s %-5s %12.4g %12.4g\n", layer.c_str(), std::string(ag::name_of(o)).c_str(),
                      d.format().name, amax, d.scale());
      }
    }
    r["fp8"] = layers;
  }
  return r;
}

}  // namespace warpnet::cli
