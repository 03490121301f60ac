#include "nn/precision_state.hpp"

#include <cmath>

namespace warpnet::nn {

namespace {
const std::string kPrefix = "precision/";
const std::string kLossScale = "precision/loss_scale";
const std::string kFp8 = "precision/fp8/";              // <layer>/<operand>: the amax history
const std::string kFp8Scale = "precision/fp8_scale/";  // <layer>/<operand>: the scale (absent in older files)
constexpr ag::Operand kOperands[] = {ag::Operand::input, ag::Operand::weight, ag::Operand::grad_output};
}  // namespace

void save_precision_state(Checkpoint& ck, ag::Precision precision, const ag::MixedPrecision* policy,
                          const DynamicLossScaler* scaler) {
  ck.tensors[kPrefix + std::string(ag::name_of(precision))] = Tensor::zeros({1}, DType::u8);
  if (scaler)
    ck.tensors[kLossScale] = Tensor::from<double>(
        {3}, {scaler->scale(), double(scaler->clean_steps()), double(scaler->skipped_steps())});
  if (!policy) return;
  for (const auto& [layer, scales] : policy->fp8_scales())
    for (ag::Operand o : kOperands) {
      const std::deque<float>& h = scales.of(o).history();
      ck.tensors[cat(kFp8, layer, "/", ag::name_of(o))] =
          Tensor::from<float>({static_cast<int64_t>(h.size())}, std::vector<float>(h.begin(), h.end()));
      // The scale too: one kept through a window of zeros is not the history's.
      ck.tensors[cat(kFp8Scale, layer, "/", ag::name_of(o))] = Tensor::from<float>({1}, {scales.of(o).scale()});
    }
}

ag::Precision precision_of(const Checkpoint& ck) {
  for (const std::string& name : ag::precision_names())
    if (ck.tensors.count(kPrefix + name)) return ag::parse_precision(name);
  return ag::Precision::fp32;
}

void restore_precision_state(const Checkpoint& ck, const std::string& path, ag::Precision precision,
                             ag::MixedPrecision* policy, DynamicLossScaler* scaler) {
  const ag::Precision saved = precision_of(ck);
  WN_CHECK(saved == precision, path, ": trained in ", ag::name_of(saved), ", resumed with --precision ",
           ag::name_of(precision), "; resume with --precision ", ag::name_of(saved),
           " (the loss scale and fp8 scales belong to the precision that made them)");
  if (scaler) {
    auto it = ck.tensors.find(kLossScale);
    WN_CHECK(it != ck.tensors.end() && it->second.numel() == 3 && it->second.dtype() == DType::f64, path,
             ": an fp16 checkpoint without its loss scale (", kLossScale, ")");
    const double* v = it->second.data<double>();
    // The step counters are whole numbers a double holds exactly; anything
    // else (NaN, a fraction, a negative count) would convert to int64
    // with undefined behaviour.
    for (int i : {1, 2})
      WN_CHECK(v[i] >= 0 && v[i] <= 0x1p53 && v[i] == std::floor(v[i]), path, ": the loss scale's ",
               i == 1 ? "clean" : "skipped", "-step count is ", v[i], ", not a whole number from 0 to 2^53");
    WN_CHECK(v[0] >= kMinLossScale && v[0] <= kMaxLossScale, path, ": a checkpointed loss scale of ", v[0],
             " is outside 2^-24 to 2^64");
    scaler->restore(v[0], static_cast<int64_t>(v[1]), static_cast<int64_t>(v[2]));
  }
  if (!policy) return;
  for (const auto& [key, t] : ck.tensors)  // a scale belongs to a history
    WN_CHECK(!key.starts_with(kFp8Scale) || ck.tensors.count(kFp8 + key.substr(kFp8Scale.size())), path,
             ": fp8 scale '", key, "' without its amax history");
  for (const auto& [key, t] : ck.tensors) {
    if (!key.starts_with(kFp8)) continue;
    const std::string rest = key.substr(kFp8.size());  // <layer>/<operand>
    const size_t slash = rest.rfind('/');
    WN_CHECK(slash != std::string::npos && t.dtype() == DType::f32 && t.rank() == 1, path,
             ": malformed fp8 scaling state '", key, "'");
    std::optional<float> scale;
    if (auto s = ck.tensors.find(kFp8Scale + rest); s != ck.tensors.end()) {
      WN_CHECK(s->second.dtype() == DType::f32 && s->second.numel() == 1, path, ": malformed fp8 scale '", s->first,
               "'");
      scale = s->second.data<float>()[0];
    }
    const std::string operand = rest.substr(slash + 1);
    ag::Fp8Scales& scales = policy->fp8_scales_of(rest.substr(0, slash));
    bool known = false;
    for (ag::Operand o : kOperands)
      if (operand == ag::name_of(o)) {
        const float* p = t.data<float>();
        try {
          scales.of(o).set_history(std::deque<float>(p, p + t.numel()), scale);
        } catch (const Error& e) {
          fail(path, ": ", key, ": ", e.what());
        }
        known = true;
      }
    WN_CHECK(known, path, ": unknown fp8 operand in '", key, "'");
  }
}

}  // namespace warpnet::nn
