#include "nn/quantize.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/text.hpp"
#include "numeric/scaling.hpp"

namespace warpnet::nn {
namespace {

struct Named {
  WeightFormat format;
  const char* name;
};
constexpr Named kNames[] = {{WeightFormat::fp32, "fp32"},
                            {WeightFormat::fp16, "fp16"},
                            {WeightFormat::bf16, "bf16"},
                            {WeightFormat::e4m3_tensor, "fp8-e4m3"},
                            {WeightFormat::e4m3_channel, "fp8-e4m3-channel"},
                            {WeightFormat::e2m1_tensor, "fp4-e2m1"},
                            {WeightFormat::e2m1_mx, "fp4-e2m1-mx"}};

// A plain cast, as __float2half_rn / __float2bfloat16_rn do it.
QuantizedTensor cast(const numeric::Format& f, std::span<const float> w) {
  QuantizedTensor q;
  q.values.reserve(w.size());
  for (float v : w) q.values.push_back(numeric::quantize(f, v));
  q.code_bytes = int64_t(w.size()) * numeric::bits(f) / 8;
  return q;
}

// fp4 codes two to a byte.
int64_t code_bytes(const numeric::Format& f, int64_t n) { return numeric::bits(f) == 4 ? (n + 1) / 2 : n; }

QuantizedTensor per_tensor(const numeric::Format& f, std::span<const float> w) {
  QuantizedTensor q;
  q.values = numeric::decode(numeric::encode_per_tensor(f, w));
  q.code_bytes = code_bytes(f, int64_t(w.size()));
  q.scale_bytes = 4;  // one fp32 scale
  return q;
}

// One per-tensor scale for each row: the row is the tensor.
QuantizedTensor per_row(const numeric::Format& f, std::span<const float> w, int64_t cols) {
  QuantizedTensor q;
  const int64_t rows = int64_t(w.size()) / cols;
  for (int64_t r = 0; r < rows; ++r) {
    const std::span<const float> row = w.subspan(size_t(r * cols), size_t(cols));
    const std::vector<float> decoded = numeric::decode(numeric::encode_per_tensor(f, row));
    q.values.insert(q.values.end(), decoded.begin(), decoded.end());
  }
  q.code_bytes = code_bytes(f, int64_t(w.size()));
  q.scale_bytes = 4 * rows;
  return q;
}

QuantizedTensor mx(const numeric::Format& f, std::span<const float> w, int64_t cols) {
  const numeric::MxTensor t = numeric::encode_mx(f, w, cols);
  QuantizedTensor q;
  q.values = numeric::decode(t);
  q.code_bytes = code_bytes(f, int64_t(w.size()));
  q.scale_bytes = int64_t(t.scales.size());  // one e8m0 byte per block
  return q;
}

}  // namespace

const std::vector<WeightFormat>& weight_formats() {
  static const std::vector<WeightFormat> all = [] {
    std::vector<WeightFormat> v;
    for (const Named& n : kNames) v.push_back(n.format);
    return v;
  }();
  return all;
}

std::string name(WeightFormat format) {
  for (const Named& n : kNames)
    if (n.format == format) return n.name;
  fail("nn::name: unknown WeightFormat ", int(format));
}

WeightFormat parse_weight_format(const std::string& text) {
  std::string known;
  for (const Named& n : kNames) {
    if (text == n.name) return n.format;
    known += cat(known.empty() ? "" : ", ", n.name);
  }
  fail("unknown weight format '", text, "'; known: ", known);
}

QuantizedTensor quantize_weights(WeightFormat format, std::span<const float> w, int64_t cols) {
  WN_CHECK(cols > 0 && int64_t(w.size()) % cols == 0, "nn::quantize_weights: ", w.size(),
           " values are not rows of ", cols);
  switch (format) {
    case WeightFormat::fp32: {
      QuantizedTensor q{std::vector<float>(w.begin(), w.end()), 4 * int64_t(w.size()), 0};
      return q;
    }
    case WeightFormat::fp16: return cast(numeric::kFp16, w);
    case WeightFormat::bf16: return cast(numeric::kBf16, w);
    case WeightFormat::e4m3_tensor: return per_tensor(numeric::kE4M3, w);
    case WeightFormat::e4m3_channel: return per_row(numeric::kE4M3, w, cols);
    case WeightFormat::e2m1_tensor: return per_tensor(numeric::kE2M1, w);
    case WeightFormat::e2m1_mx: return mx(numeric::kE2M1, w, cols);
  }
  fail("nn::quantize_weights: unknown WeightFormat ", int(format));
}

ModelQuantization quantize_model(Module& model, WeightFormat format) {
  ModelQuantization m;
  m.format = format;
  double error2 = 0, norm2 = 0;
  for (Parameter* p : model.parameters()) {
    Tensor& value = p->var.value();
    WN_CHECK(value.device() == Device::cpu && value.dtype() == DType::f32 && value.is_contiguous(),
             "nn::quantize_model: ", p->name, " is a ", value.describe(), "; weights are quantized on the CPU in f32");
    if (value.rank() < 2) {
      m.bias_values += value.numel();
      continue;
    }
    // (K, C, R, S) or (out, in): rows are the first dimension, the rest is the input.
    const int64_t cols = value.numel() / value.dim(0);
    float* w = value.data<float>();
    const QuantizedTensor q = quantize_weights(format, std::span<const float>(w, size_t(value.numel())), cols);
    for (int64_t i = 0, count = value.numel(); i < count; ++i) {
      const double d = double(q.values[size_t(i)]) - double(w[i]);
      error2 += d * d;
      norm2 += double(w[i]) * double(w[i]);
      m.zeroed += w[i] != 0 && q.values[size_t(i)] == 0;
      w[i] = q.values[size_t(i)];
    }
    m.weight_values += value.numel();
    m.weight_bytes += q.bytes();
    m.scale_bytes += q.scale_bytes;
  }
  m.relative_error = norm2 > 0 ? std::sqrt(error2 / norm2) : 0.0;
  return m;
}

}  // namespace warpnet::nn
