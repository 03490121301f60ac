#include "numeric/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace warpnet::numeric {
namespace {

Rounding draw(Round mode, Rng* rng) {
  if (mode != Round::stochastic) return {mode, 0};
  return stochastic(uint32_t(rng->next_u64() >> 32));
}

void check_narrow(const Format& f, Round mode, Rng* rng, const char* what) {
  WN_CHECK(bits(f) <= 8, what, ": codes are bytes, and ", f.name, " has ", bits(f), " bits");
  WN_CHECK(f.is_signed, what, ": ", f.name, " is unsigned (a scale format, not an element format)");
  WN_CHECK(mode != Round::stochastic || rng, what, ": stochastic rounding needs an Rng");
}

}  // namespace

float amax(std::span<const float> x) {
  float m = 0;
  for (float v : x)
    if (std::isfinite(v)) m = std::max(m, std::fabs(v));
  return m;
}

float per_tensor_scale(const Format& f, float amax) {
  if (!(amax > 0) || !std::isfinite(amax)) return 1;
  return float(std::min(max_finite(f) / double(amax), double(std::numeric_limits<float>::max())));
}

PerTensor encode_per_tensor(const Format& f, std::span<const float> x, Round mode, Rng* rng) {
  check_narrow(f, mode, rng, "numeric::encode_per_tensor");
  PerTensor t{&f, per_tensor_scale(f, amax(x)), std::vector<uint8_t>(x.size())};
  // The product in double is exact (a float times a float), so each value is rounded once.
  for (size_t i = 0; i < x.size(); ++i)
    t.codes[i] = uint8_t(encode(f, double(x[i]) * t.scale, draw(mode, rng), Saturation::finite));
  return t;
}

std::vector<float> decode(const PerTensor& t) {
  std::vector<float> out(t.codes.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = decode(*t.format, t.codes[i]) / t.scale;
  return out;
}

int mx_shared_exponent(const Format& element, float amax) {
  if (!(amax > 0)) return -127;
  int e = 0;
  std::frexp(amax, &e);  // amax = m * 2^e, m in [0.5, 1): floor(log2(amax)) = e - 1
  return std::clamp(e - 1 - emax(element), -127, 127);
}

MxTensor encode_mx(const Format& element, std::span<const float> x, int64_t cols, Round mode, Rng* rng) {
  check_narrow(element, mode, rng, "numeric::encode_mx");
  WN_CHECK(cols > 0 && int64_t(x.size()) % cols == 0, "numeric::encode_mx: ", x.size(), " values are not rows of ",
           cols);
  MxTensor t{&element, int64_t(x.size()) / cols, cols, {}, std::vector<uint8_t>(x.size())};
  t.scales.resize(size_t(t.rows * t.blocks_per_row()));
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t b = 0; b < t.blocks_per_row(); ++b) {
      const int64_t begin = r * cols + b * kMxBlock, end = r * cols + std::min(cols, (b + 1) * kMxBlock);
      const std::span<const float> block = x.subspan(size_t(begin), size_t(end - begin));
      uint8_t& scale = t.scales[size_t(r * t.blocks_per_row() + b)];
      if (!std::all_of(block.begin(), block.end(), [](float v) { return std::isfinite(v); })) {
        scale = uint8_t(canonical_nan(kE8M0));  // the block decodes to NaN; its element codes stay 0
        continue;
      }
      const int shared = mx_shared_exponent(element, amax(block));
      scale = uint8_t(encode(kE8M0, std::ldexp(1.0, shared)));
      // V_i / X in double: exact (a power of two, far inside double's range).
      for (int64_t i = begin; i < end; ++i)
        t.codes[size_t(i)] =
            uint8_t(encode(element, std::ldexp(double(x[size_t(i)]), -shared), draw(mode, rng), Saturation::finite));
    }
  }
  return t;
}

std::vector<float> decode(const MxTensor& t) {
  std::vector<float> out(t.codes.size());
  for (int64_t r = 0; r < t.rows; ++r)
    for (int64_t c = 0; c < t.cols; ++c) {
      const double scale = decode(kE8M0, t.scales[size_t(r * t.blocks_per_row() + c / kMxBlock)]);
      const size_t i = size_t(r * t.cols + c);
      out[i] = float(double(decode(*t.element, t.codes[i])) * scale);  // NaN scale: NaN
    }
  return out;
}

}  // namespace warpnet::numeric
