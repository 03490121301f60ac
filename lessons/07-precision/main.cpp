// Lesson 07 — Precision: how a float is built, what each format can hold,
// and what happens to a network's numbers in each. Prints:
//   1. the bits of a few values (1, 0.1, −3.5, 448, 65504, 1e-8) in fp32,
//      tf32, fp16, bf16, fp8 e4m3 and e5m2, fp4 e2m1: sign, exponent and
//      mantissa fields, the value stored and its error
//   2. range against precision per format (from numeric/format.hpp)
//   3. LeNet-5's gradients on a Fashion-MNIST batch in fp16 and bf16: how
//      many underflow to zero or go subnormal, without and with a loss scale
//   4. fp8 e4m3 against e5m2 on the same weights, activations and gradients,
//      without a scale and with a per-tensor scale
//   5. fp4 e2m1 on the weights: one scale per tensor against MX blocks of 32
//   6. where each format runs: H200 datasheet figures; fp4 and Blackwell
//   7. where a long sum is kept: one dot product summed in fp32, fp16 pairs
//      and bf16 pairs (__hfma2), by a thread and by a warp, on the SIMT
//      emulator (sums.cpp, kernels/examples/half_sums.cu)
// Every code and scale comes from src/numeric (encode/decode, per-tensor and
// MX scaling); the program exits 1 when a claim of the chapter does not hold.
//
//   build/bin/lesson07              # the whole chapter, about 2 s on 2 idle cores (README: what sets it)
//   build/bin/lesson07 --quick      # fewer training images; what `ctest -R lesson07_precision` runs
//   build/bin/lesson07 --markdown   # parts 1 and 2 as the README's tables
//   build/bin/lesson07 --markdown sums   # part 7's table (the README's "sums" table)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "autograd/functions.hpp"
#include "core/text.hpp"
#include "cpu/ops.hpp"
#include "datasets/idx.hpp"
#include "datasets/synthetic.hpp"
#include "device/datasheet.hpp"
#include "lessons/07-precision/sums.hpp"
#include "lessons/lesson_args.hpp"
#include "lessons/lesson_checks.hpp"
#include "lessons/lesson_data.hpp"
#include "nn/quantize.hpp"
#include "nn/trainer.hpp"
#include "numeric/scaling.hpp"
#include "numeric/table.hpp"

using namespace warpnet;
namespace num = warpnet::numeric;

namespace {

using lesson::check;
using lesson::fixed;
using lesson::grouped;

// The element formats a network meets (e8m0 is a scale, part 5).
const num::Format* const kFormats[] = {&num::kFp32, &num::kTf32, &num::kFp16, &num::kBf16,
                                       &num::kE4M3, &num::kE5M2, &num::kE2M1};
const double kValues[] = {1.0, 0.1, -3.5, 448.0, 65504.0, 1e-8};

// ==== 1. the bits ==============================================================================

struct Bits {
  std::string sign, exponent, mantissa, hex, stored, error, note;
};

std::string binary(uint32_t v, int width) {
  std::string s;
  for (int i = width - 1; i >= 0; --i) s += ((v >> i) & 1) ? '1' : '0';
  return s;
}

std::string shortest(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.10g", v);
  return text;
}

// x in f as a plain cast does it: round to nearest even, inf or NaN past the
// top (Saturation::none; e2m1 has neither and saturates).
Bits bits_of(const num::Format& f, double x) {
  const uint32_t code = num::encode(f, x);
  const double v = num::decode(f, code);
  Bits b;
  b.sign = f.is_signed ? binary(code >> (f.exponent + f.mantissa), 1) : "";
  const uint32_t field = (code >> f.mantissa) & ((1u << f.exponent) - 1);
  b.exponent = binary(field, f.exponent);
  b.mantissa = binary(code & num::mantissa_mask(f), f.mantissa);
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%0*X", (num::bits(f) + 3) / 4, code);
  b.hex = hex;
  const uint32_t magnitude = code & num::magnitude_mask(f);
  if (num::is_nan_code(f, code)) {
    b.stored = "NaN";
    b.note = "overflow: NaN (no inf)";
  } else if (num::has_inf(f) && magnitude == num::inf_code(f)) {
    b.stored = x < 0 ? "-inf" : "inf";
    b.note = "overflow: inf";
  } else {
    b.stored = shortest(v);
    char e[16];
    std::snprintf(e, sizeof e, "%.1e", std::abs(v - x) / std::abs(x));
    b.error = v == x ? "exact" : e;
    if (v == 0)
      b.note = "underflow: zero";
    else if (std::abs(x) > num::max_finite(f))
      b.note = "saturated at max";
    else if (field == 0)
      b.note = cat("subnormal: 2^", num::emin(f), " × 0.", b.mantissa);
    else
      b.note = cat("2^", int(field) - f.bias, " × 1.", b.mantissa);
  }
  return b;
}

void part1(bool markdown) {
  if (markdown) {
    std::printf("| value | format | sign | exponent | mantissa | code | stored | relative error | how |\n"
                "|---|---|---|---|---|---|---|---|---|\n");
    for (double x : kValues)
      for (const num::Format* f : kFormats) {
        const Bits b = bits_of(*f, x);
        std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", shortest(x).c_str(), f->name, b.sign.c_str(),
                    b.exponent.c_str(), b.mantissa.c_str(), b.hex.c_str(), b.stored.c_str(), b.error.c_str(),
                    b.note.c_str());
      }
    return;
  }
  std::printf("1. How a float is built: sign | exponent | mantissa\n\n");
  for (double x : kValues) {
    std::printf("  %s\n", shortest(x).c_str());
    for (const num::Format* f : kFormats) {
      const Bits b = bits_of(*f, x);
      const std::string fields = b.sign + "|" + b.exponent + "|" + b.mantissa;
      std::printf("    %-5s %-34s %-10s %-16s %-8s %s\n", f->name, fields.c_str(), b.hex.c_str(), b.stored.c_str(),
                  b.error.c_str(), b.note.c_str());
    }
  }
  std::printf("  (a plain cast: nearest even; rounding past the largest finite value gives inf in fp16, bf16\n"
              "   and e5m2, NaN in e4m3, 6 in e2m1; 'how': 2^(exponent field − bias) × 1.mantissa)\n");
  // Spot checks of the diagrams against values worked by hand.
  const bool hand = num::encode(num::kFp32, 1.0) == 0x3F800000 && num::encode(num::kFp16, 0.1) == 0x2E66 &&
                    num::encode(num::kBf16, -3.5) == 0xC060 && num::encode(num::kE4M3, 448.0) == 0x7E &&
                    num::encode(num::kFp16, 65504.0) == 0x7BFF && num::encode(num::kFp16, 1e-8) == 0;
  std::printf("  fp32 1 = 0x3F800000, fp16 0.1 = 0x2E66, bf16 −3.5 = 0xC060, e4m3 448 = 0x7E, fp16 65504 = 0x7BFF,\n"
              "  fp16 1e-8 = 0 (below half of 2^-24): %s\n\n",
              check(hand));
}

// ==== 2. range against precision ==============================================================

// Decimal digits a mantissa carries: log10 of 2^(mantissa + 1).
double decimal_digits(const num::Format& f) { return (f.mantissa + 1) * std::log10(2.0); }
// How many powers of two lie between the smallest subnormal and the largest value.
double binades(const num::Format& f) { return std::log2(num::max_finite(f) / num::min_subnormal(f)); }

void part2(bool markdown) {
  if (markdown) {
    std::printf("\n| format | bits s.e.m | max finite | min normal | min subnormal | epsilon | decimal digits | "
                "binades, subnormal to max |\n|---|---|---|---|---|---|---:|---:|\n");
  } else {
    std::printf("2. Range against precision\n\n");
    std::printf("  %-6s %-10s %-26s %-26s %-26s %-22s %7s %8s\n", "format", "bits s.e.m", "max finite", "min normal",
                "min subnormal", "epsilon", "digits", "binades");
  }
  for (const num::Format* f : kFormats) {
    const std::string sem = cat(int(f->is_signed), ".", f->exponent, ".", f->mantissa);
    if (markdown)
      std::printf("| %s | %s | %s | %s | %s | %s | %.1f | %.0f |\n", f->name, sem.c_str(),
                  num::show_value(num::max_finite(*f)).c_str(), num::show_value(num::min_normal(*f)).c_str(),
                  num::show_value(num::min_subnormal(*f)).c_str(), num::show_value(num::epsilon(*f)).c_str(),
                  decimal_digits(*f), binades(*f));
    else
      std::printf("  %-6s %-10s %-26s %-26s %-26s %-22s %7.1f %8.0f\n", f->name, sem.c_str(),
                  num::show_value(num::max_finite(*f)).c_str(), num::show_value(num::min_normal(*f)).c_str(),
                  num::show_value(num::min_subnormal(*f)).c_str(), num::show_value(num::epsilon(*f)).c_str(),
                  decimal_digits(*f), binades(*f));
  }
  if (markdown) {
    std::printf("\nPrinted by `build/bin/lesson07 --markdown` from `src/numeric/format.hpp`. Digits: "
                "(mantissa + 1)·log10 2; binades: log2(max / min subnormal).\n");
    return;
  }
  // The claims the chapter makes of this table.
  const bool same_range =
      num::max_finite(num::kBf16) > 3e38 && num::min_normal(num::kBf16) == num::min_normal(num::kFp32);
  const bool fp16_narrow = num::max_finite(num::kFp16) == 65504 && num::min_subnormal(num::kFp16) == num::pow2(-24);
  std::printf("  bf16 spans fp32's range (max > 3e38, the same min normal 2^-126) with 8 bits of precision: %s\n",
              check(same_range));
  std::printf("  fp16 holds 3 more bits of precision than bf16 but stops at 65504 and 2^-24: %s\n\n",
              check(fp16_narrow && num::kFp16.mantissa == num::kBf16.mantissa + 3));
}

// ==== the tensors parts 3 to 5 look at ===========================================================

struct Named {
  std::string name;
  std::vector<float> values;
  int64_t cols = 1;  // weights: the input dimension (MX blocks run along it); others: values per image
};

struct Tensors {
  std::vector<Named> weights, activations, weight_grads, activation_grads;
};

std::vector<float> values_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  return std::vector<float>(c.data<float>(), c.data<float>() + c.numel());
}

// One forward and backward of `model` on `batch`, in fp32: every weight, each
// layer's output, every weight gradient and each layer output's gradient.
Tensors one_step(nn::Sequential& model, const data::Batch& batch) {
  Tensors t;
  for (nn::Parameter* p : model.parameters()) {
    p->var.grad() = Tensor();
    if (p->var.value().rank() >= 2)
      t.weights.push_back({p->name, values_of(p->var.value()), p->var.value().numel() / p->var.value().dim(0)});
  }
  std::vector<std::pair<std::string, ag::Var>> outputs;
  {
    ag::Tape tape;
    ag::TapeScope recording(tape);
    ag::Var h(batch.inputs);
    for (const auto& layer : model.layers()) {
      h = (*layer)(h);
      outputs.emplace_back(layer->name(), h);
    }
    ag::Var loss = ag::softmax_cross_entropy(h, batch.labels);
    tape.backward(loss);
  }
  for (nn::Parameter* p : model.parameters())
    if (p->var.value().rank() >= 2)
      t.weight_grads.push_back(
          {p->name + ".grad", values_of(p->var.grad()), p->var.value().numel() / p->var.value().dim(0)});
  for (auto& [name, var] : outputs) {
    if (name.rfind("flatten", 0) == 0) continue;  // a view: the same numbers as the pool before it
    const int64_t per_image = var.value().numel() / var.value().dim(0);
    t.activations.push_back({name, values_of(var.value()), per_image});
    if (var.grad().defined()) t.activation_grads.push_back({"d " + name, values_of(var.grad()), per_image});
  }
  return t;
}

std::vector<float> all_of(const std::vector<Named>& group) {
  std::vector<float> v;
  for (const Named& n : group) v.insert(v.end(), n.values.begin(), n.values.end());
  return v;
}

// ==== 3. gradients in fp16 and bf16, and loss scaling ===========================================

struct Fate {
  int64_t nonzero = 0, underflow = 0, subnormal = 0, overflow = 0;
  double error2 = 0, norm2 = 0;  // over the values that stay finite
  double pct(int64_t k) const { return nonzero ? 100.0 * double(k) / double(nonzero) : 0.0; }
  double relative_error() const { return norm2 > 0 ? std::sqrt(error2 / norm2) : 0.0; }
};

// The fp32 gradients times `scale`, each rounded once to f (a plain cast):
// what a backward pass that keeps its gradients in f would store, if its
// arithmetic were exact. (Loss scaling multiplies the loss by the scale;
// backward is linear, so every gradient is scaled by the same power of two,
// exactly, in fp32.)
Fate fate(const num::Format& f, const std::vector<float>& values, double scale) {
  Fate r;
  for (float v : values) {
    if (v == 0) continue;
    ++r.nonzero;
    const double x = double(v) * scale;
    const uint32_t code = num::encode(f, x);
    const double q = num::decode(f, code);
    if (std::isinf(q) || std::isnan(q)) {
      ++r.overflow;
      continue;
    }
    if (q == 0)
      ++r.underflow;
    else if (std::abs(q) < num::min_normal(f))
      ++r.subnormal;
    r.error2 += (q - x) * (q - x);
    r.norm2 += x * x;
  }
  return r;
}

// |values| by powers of two, as a text histogram with fp16's limits marked.
void histogram(const std::vector<float>& values) {
  std::vector<int64_t> counts(13, 0);  // bins of 4 binades: [2^-48, 2^-44), ..., [2^0, 2^4)
  int64_t below = 0, nonzero = 0;
  for (float v : values) {
    if (v == 0) continue;
    ++nonzero;
    const int e = int(std::floor(std::log2(std::abs(double(v)))));
    const int bin = (e + 48) / 4;
    if (e < -48)
      ++below;
    else
      ++counts[size_t(std::min(bin, 12))];
  }
  std::printf("    |gradient|            share  (fp16: normal from 2^-14, subnormal down to 2^-24, zero below)\n");
  if (below) std::printf("    below 2^-48         %5.1f%%\n", 100.0 * double(below) / double(nonzero));
  for (int b = 0; b < 13; ++b) {
    const int lo = 4 * b - 48;
    const double share = 100.0 * double(counts[size_t(b)]) / double(nonzero);
    const char* mark = lo + 4 <= -25 ? "  fp16: zero" : lo >= -14 ? "" : "  fp16: subnormal";
    if (lo == -28) mark = "  fp16: zero below 2^-25, subnormal above";
    if (lo == -16) mark = "  fp16: subnormal below 2^-14";
    std::printf("    [2^%-3d, 2^%-3d)      %5.1f%%  %s%s\n", lo, lo + 4, share,
                std::string(size_t(std::lround(share / 2)), '#').c_str(), mark);
  }
}

void scaling_table(const char* what, const std::vector<float>& values) {
  std::printf("  %s: %zu values, %lld nonzero\n", what, values.size(),
              static_cast<long long>(fate(num::kFp32, values, 1).nonzero));
  std::printf("    %-10s %-6s %12s %12s %12s %16s\n", "loss scale", "format", "underflow", "subnormal", "overflow",
              "relative error");
  for (int k : {0, 10, 16, 24})
    for (const num::Format* f : {&num::kFp16, &num::kBf16}) {
      const Fate r = fate(*f, values, num::pow2(k));
      std::printf("    %-10s %-6s %11.2f%% %11.2f%% %11.2f%% %16.1e\n", k ? cat("2^", k).c_str() : "1", f->name,
                  r.pct(r.underflow), r.pct(r.subnormal), r.pct(r.overflow), r.relative_error());
    }
}

void part3(const Tensors& start, const Tensors& trained, const std::string& data_note) {
  std::printf("3. Gradients in fp16 and bf16, and loss scaling\n\n");
  std::printf("  %s\n", data_note.c_str());
  std::printf("  LeNet-5, one forward and backward in fp32 on a batch of 64; each gradient (times the loss\n"
              "  scale) rounded once to fp16 and to bf16. Shares of the nonzero values; the relative error is\n"
              "  ||rounded − exact|| / ||exact|| over the values that stay finite.\n\n");
  const std::vector<float> grads = all_of(trained.weight_grads), act_grads = all_of(trained.activation_grads);
  std::printf("  after one epoch of training:\n");
  histogram(act_grads);
  scaling_table("gradients of the layers' outputs (what backward passes down)", act_grads);
  scaling_table("weight gradients (what the optimizer reads)", grads);
  std::printf("  at initialization, the same batch:\n");
  scaling_table("gradients of the layers' outputs", all_of(start.activation_grads));

  // The chapter's claims, on the trained network's output gradients.
  const Fate fp16 = fate(num::kFp16, act_grads, 1), bf16 = fate(num::kBf16, act_grads, 1);
  const Fate fp16_scaled = fate(num::kFp16, act_grads, num::pow2(10));
  std::printf("\n  unscaled, fp16 loses %.2f%% of the nonzero output gradients to zero and keeps %.2f%% only as\n"
              "  subnormals; bf16 loses %.2f%%: bf16 has fp32's range: %s\n",
              fp16.pct(fp16.underflow), fp16.pct(fp16.subnormal), bf16.pct(bf16.underflow),
              check(bf16.underflow == 0 && fp16.underflow + fp16.subnormal > 0));
  // Scaling up moves every value up the grid, zeros to subnormals and
  // subnormals to normal numbers; the subnormals' share may grow or shrink
  // (it grows where most values were zeros), the normal numbers' only grows.
  const auto normal_pct = [](const Fate& r) { return r.pct(r.nonzero - r.underflow - r.subnormal - r.overflow); };
  std::printf("  a loss scale of 2^10 brings fp16's zeros from %.2f%% to %.2f%% and its subnormals from %.2f%% to "
              "%.2f%%:\n  %.2f%% normal numbers, against %.2f%%: %s\n",
              fp16.pct(fp16.underflow), fp16_scaled.pct(fp16_scaled.underflow), fp16.pct(fp16.subnormal),
              fp16_scaled.pct(fp16_scaled.subnormal), normal_pct(fp16_scaled), normal_pct(fp16),
              check(fp16_scaled.underflow <= fp16.underflow && normal_pct(fp16_scaled) > normal_pct(fp16)));
  // bf16 keeps 8 significant bits, fp16 11: a value's rounding error is at
  // most 2^-8 of it in bf16 and 2^-11 in fp16 (normal numbers), a grid 8×
  // coarser, so bf16's error is the larger wherever fp16 keeps the values.
  std::printf("  where both keep every value (scale 2^10), bf16's relative error %.1e is larger than fp16's %.1e\n"
              "  (8 significant bits against 11): %s\n\n",
              fate(num::kBf16, act_grads, num::pow2(10)).relative_error(), fp16_scaled.relative_error(),
              check(fate(num::kBf16, act_grads, num::pow2(10)).relative_error() > fp16_scaled.relative_error()));
}

// ==== 4. fp8: e4m3 against e5m2 ==================================================================

struct Fp8Stats {
  int64_t nonzero = 0, flushed = 0, saturated = 0;
  double error2 = 0, norm2 = 0;
  double relative_error() const { return norm2 > 0 ? std::sqrt(error2 / norm2) : 0.0; }
  double pct(int64_t k) const { return nonzero ? 100.0 * double(k) / double(nonzero) : 0.0; }
};

// Each tensor of the group in f: unscaled (a saturating cast) or with its own
// per-tensor scale (numeric::encode_per_tensor: amax lands on the max).
Fp8Stats fp8_stats(const num::Format& f, const std::vector<Named>& group, bool scaled) {
  Fp8Stats s;
  for (const Named& n : group) {
    std::vector<float> q;
    float scale = 1;
    if (scaled) {
      const num::PerTensor t = num::encode_per_tensor(f, n.values);
      scale = t.scale;
      q = num::decode(t);
    } else {
      for (float v : n.values) q.push_back(num::quantize(f, v, {}, num::Saturation::finite));
    }
    for (size_t i = 0; i < q.size(); ++i) {
      const double x = n.values[i];
      if (x == 0) continue;
      ++s.nonzero;
      if (q[i] == 0) ++s.flushed;
      if (std::abs(x) * scale > num::max_finite(f)) ++s.saturated;
      s.error2 += (q[i] - x) * (q[i] - x);
      s.norm2 += x * x;
    }
  }
  return s;
}

void part4(const Tensors& t) {
  std::printf("4. fp8: e4m3 against e5m2, on the trained network's tensors\n\n");
  std::printf("  %-22s %-6s %-11s %15s %10s %10s\n", "tensors", "format", "scale", "relative error", "flushed",
              "saturated");
  struct Group {
    const char* name;
    const std::vector<Named>* tensors;
  };
  const Group groups[] = {{"weights", &t.weights},
                          {"activations", &t.activations},
                          {"weight gradients", &t.weight_grads},
                          {"output gradients", &t.activation_grads}};
  double e4m3_weights = 0, e5m2_weights = 0, e4m3_grads_unscaled = 0, e4m3_grads_scaled = 0;
  for (const Group& g : groups)
    for (bool scaled : {false, true})
      for (const num::Format* f : {&num::kE4M3, &num::kE5M2}) {
        const Fp8Stats s = fp8_stats(*f, *g.tensors, scaled);
        std::printf("  %-22s %-6s %-11s %15.3f %9.2f%% %9.2f%%\n", g.name, f->name, scaled ? "per tensor" : "none",
                    s.relative_error(), s.pct(s.flushed), s.pct(s.saturated));
        if (scaled && g.tensors == &t.weights) (f == &num::kE4M3 ? e4m3_weights : e5m2_weights) = s.relative_error();
        if (f == &num::kE4M3 && g.tensors == &t.weight_grads)
          (scaled ? e4m3_grads_scaled : e4m3_grads_unscaled) = s.pct(s.flushed);
      }
  std::printf("  (relative error ||q − x|| / ||x||; flushed: nonzero values that became 0; saturated: |x|·scale\n"
              "   above the format's max, clamped to it; each tensor has its own scale, max / amax)\n");
  std::printf("  scaled, e4m3 holds the weights closer than e5m2 (%.3f against %.3f: 3 mantissa bits against 2): %s\n",
              e4m3_weights, e5m2_weights, check(e4m3_weights < e5m2_weights));
  std::printf("  a per-tensor scale rescues e4m3's weight gradients: %.2f%% flushed unscaled, %.2f%% scaled: %s\n\n",
              e4m3_grads_unscaled, e4m3_grads_scaled, check(e4m3_grads_scaled < e4m3_grads_unscaled));
}

// ==== 5. fp4 e2m1: one scale per tensor against MX blocks ========================================

// fp4 of one tensor, one scale per tensor and MX blocks along its rows.
struct Fp4Stats {
  double tensor2 = 0, mx2 = 0, norm2 = 0;  // squared errors and norm
  int64_t nonzero = 0, zero_tensor = 0, zero_mx = 0;
  void add(const Named& n) {
    const std::vector<float> qt = nn::quantize_weights(nn::WeightFormat::e2m1_tensor, n.values, n.cols).values;
    const std::vector<float> qm = nn::quantize_weights(nn::WeightFormat::e2m1_mx, n.values, n.cols).values;
    for (size_t i = 0; i < n.values.size(); ++i) {
      const double x = n.values[i];
      tensor2 += (qt[i] - x) * (qt[i] - x), mx2 += (qm[i] - x) * (qm[i] - x), norm2 += x * x;
      if (x != 0) ++nonzero, zero_tensor += qt[i] == 0, zero_mx += qm[i] == 0;
    }
  }
  double error_tensor() const { return std::sqrt(tensor2 / norm2); }
  double error_mx() const { return std::sqrt(mx2 / norm2); }
  double pct(int64_t k) const { return 100.0 * double(k) / double(nonzero); }
};

void part5(const Tensors& t) {
  std::printf("5. fp4 e2m1: one scale per tensor against MX blocks of 32\n\n");
  std::printf("  %-22s %-12s %14s %11s %13s %10s\n", "tensor", "(rows, cols)", "error, tensor", "error, MX",
              "zero, tensor", "zero, MX");
  auto row = [](const std::string& name, const std::string& shape, const Fp4Stats& s) {
    std::printf("  %-22s %-12s %14.3f %11.3f %12.1f%% %9.1f%%\n", name.c_str(), shape.c_str(), s.error_tensor(),
                s.error_mx(), s.pct(s.zero_tensor), s.pct(s.zero_mx));
  };
  Fp4Stats weights;
  for (const Named& w : t.weights) {
    Fp4Stats s;
    s.add(w);
    weights.add(w);
    row(w.name, cat("(", int64_t(w.values.size()) / w.cols, ", ", w.cols, ")"), s);
  }
  row("all weights", "", weights);
  Fp4Stats activations, gradients;
  for (const Named& a : t.activations) activations.add(a);
  for (const Named& g : t.activation_grads) gradients.add(g);
  row("activations", "per image", activations);
  row("output gradients", "per image", gradients);
  std::printf("  (weights: rows are output channels, blocks run along the inputs; activations and gradients:\n"
              "   each tensor scaled on its own, blocks of 32 consecutive values of one image)\n");
  // Over all weights, not per layer: in a layer whose blocks' amax sit near
  // the tensor's, a block scale rounded down to a power of two can be up to
  // 1.5× coarser than 6 / amax and zero a few more (the synthetic set's fc3).
  std::printf("  MX flushes fewer of all the weights to zero than one scale per tensor (%.1f%% against %.1f%%): %s\n",
              weights.pct(weights.zero_mx), weights.pct(weights.zero_tensor),
              check(weights.zero_mx < weights.zero_tensor));
  std::printf("  on the output gradients, whose magnitudes vary most, MX's error %.3f is below one scale's %.3f: %s\n",
              gradients.error_mx(), gradients.error_tensor(), check(gradients.error_mx() < gradients.error_tensor()));
  // A block, shown: the first 8 of fc1's first 32 weights.
  for (const Named& w : t.weights) {
    if (w.name != "fc1.weight") continue;
    const std::span<const float> block(w.values.data(), 32);
    const num::MxTensor mx = num::encode_mx(num::kE2M1, block, 32);
    const num::PerTensor one = num::encode_per_tensor(num::kE2M1, w.values);
    const std::vector<float> dm = num::decode(mx), dt = num::decode(one);
    const int shared = num::mx_shared_exponent(num::kE2M1, num::amax(block));
    std::printf("  fc1.weight, row 0, first block: amax %.4f → e8m0 scale 2^%d, amax / scale = %.2f (e2m1 stops at\n"
                "  6: above is clamped); the tensor's amax %.4f → one scale 6 / amax = %.2f\n",
                num::amax(block), shared, std::ldexp(num::amax(block), -shared), num::amax(w.values), one.scale);
    std::printf("    %-12s", "fp32");
    for (int i = 0; i < 8; ++i) std::printf(" %8.4f", block[size_t(i)]);
    std::printf("\n    %-12s", "MX fp4");
    for (int i = 0; i < 8; ++i) std::printf(" %8.4f", dm[size_t(i)]);
    std::printf("\n    %-12s", "tensor fp4");
    for (int i = 0; i < 8; ++i) std::printf(" %8.4f", dt[size_t(i)]);
    std::printf("\n");
  }
  std::printf("  (e2m1 holds 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives: the scale decides what they stand for)\n\n");
}

// ==== 6. where each format runs ====================================================================

void part6() {
  std::printf("6. Where each format runs (H200 SXM datasheet figures, dense; not measured here)\n\n");
  // src/device/datasheet.hpp: 67 TFLOP/s fp32 = 132 SMs × 1.98 GHz × 256;
  // 989.4 bf16/fp16 and 1979 fp8 on tensor cores = 132 SMs × 1.83 GHz × 4096
  // / 8192. Hopper has no fp4 tensor cores.
  namespace h200 = device::datasheet::h200;
  struct Row {
    const char* format;
    double tflops;
    const char* unit;
  };
  const Row rows[] = {{"fp32", h200::kFp32Flops / 1e12, "CUDA cores (FMA)"},
                      {"bf16 / fp16", h200::kBf16Flops / 1e12, "tensor cores, fp32 accumulation"},
                      {"fp8 e4m3 / e5m2", h200::kFp8Flops / 1e12, "tensor cores, ~14-bit sums (fp32 by software)"},
                      {"fp4 e2m1", 0, "none on Hopper: storage, decoded to a wider format"}};
  std::printf("  %-18s %14s %10s  %s\n", "format", "TFLOP/s", "× fp32", "where");
  for (const Row& r : rows)
    if (r.tflops > 0)
      std::printf("  %-18s %14.1f %9.1f×  %s\n", r.format, r.tflops, r.tflops / rows[0].tflops, r.unit);
    else
      std::printf("  %-18s %14s %10s  %s\n", r.format, "-", "-", r.unit);
  std::printf("  bytes per value: fp32 4, bf16/fp16 2, fp8 1, fp4 0.5 (+ 1 scale byte per 32 with MX):\n"
              "  a memory-bound kernel moves 2×, 4×, about 7.5× fewer bytes\n\n");
}

// ==== data and training ============================================================================

struct Data {
  data::Dataset train, test;
  std::string note;
};

Data load(int64_t n_train) {
  lesson::LessonData d = lesson::load_fashion_mnist_or_squares(n_train, 1000);
  const std::string note =
      d.fashion() ? cat("Fashion-MNIST from ", d.dir, ": the first ", n_train, " training images")
                  : cat("NOTE: Fashion-MNIST could not be read (", d.why_synthetic,
                        "); synthetic images (data::make_squares) instead");
  return {std::move(d.train), std::move(d.test), note};
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<lesson::Mode> mode =
      lesson::parse_mode(argc, argv, "parts 1 and 2 as tables; sums: part 7's", {"sums"});
  if (!mode) return 2;
  const bool markdown = mode->markdown, quick = mode->quick;
  try {
    if (mode->table == "sums") {
      lesson07::where_sums_are_kept(true);
      return lesson::failures() ? 1 : 0;
    }
    if (markdown) {
      part1(true);
      part2(true);
      return 0;
    }
    std::printf("Lesson 07 — Precision%s\n=====================\n\n", quick ? " (--quick)" : "");
    part1(false);
    part2(false);

    const Data d = load(quick ? 2000 : 12000);
    nn::TrainOptions o;
    o.model = "lenet5";
    o.epochs = 1;
    o.batch_size = 64;
    o.seed = 1;
    nn::Trainer trainer(o, d.train, d.test);
    const data::Dataset first = data::head(d.test, 64);
    const data::Batch batch{first.inputs, first.labels};
    const Tensors start = one_step(trainer.model(), batch);
    const nn::EpochStats e = trainer.run().at(0);
    char accuracy[16];
    std::snprintf(accuracy, sizeof accuracy, "%.1f%%", 100 * e.test_accuracy);
    const std::string note = cat(d.note, ";\n  LeNet-5 trained 1 epoch on them (Adam 1e-3, batch 64, seed 1), test accuracy ",
                                 accuracy, " on 1000 test images;\n  the batch: the first 64 test images");
    const Tensors trained = one_step(trainer.model(), batch);
    part3(start, trained, note);
    part4(trained);
    part5(trained);
    part6();
    lesson07::where_sums_are_kept(false);
    return lesson::finish_checks();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lesson07: %s\n", e.what());
    return 1;
  }
}
