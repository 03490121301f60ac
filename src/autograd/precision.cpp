#include "autograd/precision.hpp"

#include <algorithm>
#include <cmath>

#include "autograd/rounding_table.hpp"
#include "core/memory.hpp"
#include "numeric/convert.hpp"
#include "numeric/scaling.hpp"

namespace warpnet::ag {

namespace {

MixedPrecision*& active_policy() {
  thread_local MixedPrecision* policy = nullptr;
  return policy;
}

// Bytes one value of `f` takes in memory: tf32's 19 bits live in a 32-bit word.
int64_t stored_bytes(const numeric::Format& f) { return &f == &numeric::kTf32 ? 4 : numeric::bits(f) / 8; }

bool is_fp8(const numeric::Format& f) { return &f == &numeric::kE4M3 || &f == &numeric::kE5M2; }

const float* values_of(const Tensor& x, const char* what) {
  WN_CHECK(x.dtype() == DType::f32 && x.device() == Device::cpu, what,
           ": emulated low precision needs an f32 tensor on the CPU, got ", x.describe());
  return x.data<float>();
}

}  // namespace

std::string_view name_of(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
    case Precision::fp8: return "fp8";
  }
  return "?";
}

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> names{"fp32", "tf32", "bf16", "fp16", "fp8"};
  return names;
}

Precision parse_precision(std::string_view name) {
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::bf16, Precision::fp16, Precision::fp8})
    if (name == name_of(p)) return p;
  fail("unknown precision '", name, "' (choose fp32, tf32, bf16, fp16 or fp8)");
}

std::string_view name_of(Operand o) {
  switch (o) {
    case Operand::input: return "input";
    case Operand::weight: return "weight";
    case Operand::grad_output: return "grad_output";
  }
  return "?";
}

// ---- delayed scaling --------------------------------------------------------

DelayedScale::DelayedScale(const numeric::Format& format, int window, int margin)
    : format_(&format), window_(window), margin_(margin) {
  WN_CHECK(window >= 1, "fp8 delayed scaling: the amax window must hold at least one step, got ", window);
  WN_CHECK(margin >= 0, "fp8 delayed scaling: the margin must be >= 0, got ", margin);
}

void DelayedScale::update_scale() {
  float amax = 0;
  for (float a : history_) amax = std::isfinite(a) ? std::max(amax, a) : INFINITY;
  if (amax > 0 && std::isfinite(amax))
    scale_ = numeric::per_tensor_scale(*format_, amax) / float(numeric::pow2(margin_));
}

void DelayedScale::record(float amax) {
  history_.push_back(amax);
  while (static_cast<int>(history_.size()) > window_) history_.pop_front();
  ++recorded_;
  scale_before_newest_ = scale_;
  update_scale();
}

void DelayedScale::revise_newest(float amax) {
  WN_CHECK(!history_.empty(), "fp8 delayed scaling: no amax recorded yet to revise");
  WN_CHECK(amax >= 0, "fp8 delayed scaling: an amax of ", amax, " (a magnitude: 0 to inf)");
  history_.back() = amax;
  scale_ = scale_before_newest_;  // as if `amax` had been recorded: an inf or a 0 keeps the scale before it
  update_scale();
}

void DelayedScale::set_history(std::deque<float> history, std::optional<float> scale) {
  WN_CHECK(static_cast<int>(history.size()) <= window_, "fp8 delayed scaling: a history of ", history.size(),
           " steps does not fit a window of ", window_);
  WN_CHECK(!scale || (*scale > 0 && std::isfinite(*scale)), "fp8 delayed scaling: a saved scale of ", *scale,
           " (it must be positive and finite)");
  // A step records the largest magnitude it saw, inf where it saw an inf
  // or a NaN (amax_of): never a negative number or a NaN.
  for (float a : history)
    WN_CHECK(a >= 0, "fp8 delayed scaling: an amax of ", a, " in the history (a magnitude: 0 to inf)");
  history_ = std::move(history);
  scale_ = 1.0f;
  if (scale) scale_ = *scale;
  else update_scale();
}

DelayedScale& Fp8Scales::of(Operand o) {
  return o == Operand::input ? input : o == Operand::weight ? weight : grad_output;
}
const DelayedScale& Fp8Scales::of(Operand o) const { return const_cast<Fp8Scales*>(this)->of(o); }

// ---- rounding tensors -------------------------------------------------------

float amax_of(const Tensor& x) {
  const Tensor c = x.contiguous();
  const float* p = values_of(c, "amax");
  float m = 0;
  for (int64_t i = 0, count = c.numel(); i < count; ++i) {
    if (!std::isfinite(p[i])) return INFINITY;
    m = std::max(m, std::fabs(p[i]));
  }
  return m;
}

Tensor round_to_format(const Tensor& x, const numeric::Format& format) {
  const Tensor c = x.contiguous();
  const float* p = values_of(c, "round_to_format");
  const int64_t n = c.numel();
  const RoundingTable& round = rounding_table(format);  // numeric::quantize's answers
  // Already in the format: use it as it is (a scan that stops at the first
  // value that is not, usually the first one).
  bool exact = true;
  for (int64_t i = 0; i < n && exact; ++i) exact = round(p[i]) == p[i];
  if (exact) return c;
  Tensor out = Tensor::empty(c.shape());
  float* q = out.data<float>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) q[i] = round(p[i]);
  return out;
}

void round_in_place(Tensor& x, const numeric::Format& format) {
  WN_CHECK(x.is_contiguous(), "round_in_place: needs a contiguous tensor, got ", x.describe());
  float* p = const_cast<float*>(values_of(x, "round_in_place"));
  const int64_t n = x.numel();
  const RoundingTable& round = rounding_table(format);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) p[i] = round(p[i]);
}

Tensor quantize_scaled(const Tensor& x, const numeric::Format& format, float scale) {
  WN_CHECK(is_fp8(format), "quantize_scaled: per-tensor scaling is for fp8 here, not ", format.name);
  WN_CHECK(scale > 0 && std::isfinite(scale), "quantize_scaled: the scale must be positive and finite, got ", scale);
  const Tensor c = x.contiguous();
  const float* p = values_of(c, "quantize_scaled");
  const int64_t n = c.numel();
  Tensor out = Tensor::empty(c.shape());
  float* q = out.data<float>();
  const RoundingTable& round = rounding_table(format);  // saturating, as numeric's Saturation::finite
  // The code holds x·scale, the product taken in fp32 as a GPU's cast
  // kernel does (numeric::encode_per_tensor rounds the exact product: the two
  // differ where the fp32 product lands on a tie); the GEMM's fp32 result is
  // divided by the scales afterwards, the same as multiplying the decoded
  // values divided by their scale.
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) q[i] = static_cast<float>(double(round(p[i] * scale)) / double(scale));
  return out;
}

// ---- the policy ---------------------------------------------------------------

MixedPrecision::MixedPrecision(Precision precision, Fp8Options fp8) : precision_(precision), fp8_options_(fp8) {
  // Checks the options now rather than at the first forward.
  DelayedScale(numeric::kE4M3, fp8.window, fp8.margin);
}

const numeric::Format* MixedPrecision::operand_format(Operand o) const {
  switch (precision_) {
    case Precision::fp32: return nullptr;
    case Precision::tf32: return &numeric::kTf32;
    case Precision::bf16: return &numeric::kBf16;
    case Precision::fp16: return &numeric::kFp16;
    case Precision::fp8: return o == Operand::grad_output ? &numeric::kE5M2 : &numeric::kE4M3;
  }
  return nullptr;
}

const numeric::Format* MixedPrecision::activation_format() const {
  // bf16 and fp16 keep activations in the format (autocast); tf32 is an
  // fp32 storage format, and the fp8 recipe keeps fp32 between the GEMMs.
  if (precision_ == Precision::bf16) return &numeric::kBf16;
  if (precision_ == Precision::fp16) return &numeric::kFp16;
  return nullptr;
}

Fp8Scales& MixedPrecision::fp8_scales_of(const std::string& layer) {
  auto it = fp8_.find(layer);
  if (it == fp8_.end()) {
    const int w = fp8_options_.window, m = fp8_options_.margin;
    it = fp8_.emplace(layer, Fp8Scales{DelayedScale(numeric::kE4M3, w, m), DelayedScale(numeric::kE4M3, w, m),
                                       DelayedScale(numeric::kE5M2, w, m)})
             .first;
  }
  return it->second;
}

Tensor MixedPrecision::operand(const Tensor& t, Operand o, const std::string& layer, bool training) {
  const numeric::Format* f = operand_format(o);
  if (!f) return t;
  // A parameter's low-precision copy is weight memory; the rest is what the
  // caller's scope says (activations forward, gradients backward). Either
  // counts at the format's width. tf32's copies are scratch: a GPU rounds
  // to tf32 in registers inside the GEMM, and nothing keeps them.
  const bool parameter = t.storage()->tag() == MemTag::parameter;
  const MemoryScope tag(precision_ == Precision::tf32 ? MemTag::workspace
                        : parameter                    ? MemTag::parameter
                                                       : current_mem_context().tag);
  const ValueWidthScope width(stored_bytes(*f));
  if (precision_ != Precision::fp8) return round_to_format(t, *f);  // t itself when already in the format
  DelayedScale& s = fp8_scales_of(layer).of(o);
  Tensor q = quantize_scaled(t, *f, s.scale());  // this step's scale: from the steps before
  if (training) s.record(amax_of(t));            // this step's amax: for the steps after
  return q;
}

int64_t MixedPrecision::activation_bytes() const {
  const numeric::Format* f = activation_format();
  return f ? stored_bytes(*f) : 4;
}

void MixedPrecision::keep_as_activation(Tensor& y) const {
  if (const numeric::Format* f = activation_format()) round_in_place(y, *f);
}

MixedPrecision* MixedPrecision::active() { return active_policy(); }

PrecisionScope::PrecisionScope(MixedPrecision* policy) : saved_(active_policy()) { active_policy() = policy; }
PrecisionScope::~PrecisionScope() { active_policy() = saved_; }

}  // namespace warpnet::ag
