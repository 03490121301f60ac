// Weight-only quantization: a trained model's weights stored in a narrow
// format (fp16, bf16, fp8 e4m3, fp4 e2m1) and read back as fp32 for compute,
// so the accuracy a format costs, and the bytes it saves, can be measured on
// any machine. Nothing here makes inference faster on a CPU: the decoded
// values are ordinary floats. Speed comes from tensor cores that read the
// narrow codes themselves (fp8 on Hopper, fp4 on Blackwell).
//
// A weight is viewed as (rows, cols) row-major, rows the output units (a
// Linear's out, a convolution's K) and cols the input dimension the matmul
// reduces over (in, or C·R·S): the direction OCP MX runs its blocks of 32,
// so that one block's shared scale multiplies one partial dot product.
// Every code and scale comes from src/numeric (encode/decode, per-tensor
// and MX scaling); this file only chooses, applies and counts them.
//
// Bytes, as a packed store would hold them: fp16/bf16 2 per value, fp8 1,
// fp4 half (two codes per byte, a tensor of n values takes ceil(n/2));
// per-tensor and per-channel scales an fp32 each (4 B), MX scales an e8m0
// each (1 B per block of 32 along a row; a row whose length is not a
// multiple of 32 ends in a shorter block that still takes a whole scale).
// Biases are not quantized (they are few and added once per output): they
// stay fp32 and count 4 B each.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nn/module.hpp"

namespace warpnet::nn {

enum class WeightFormat {
  fp32,          // as trained: the reference
  fp16,          // IEEE half, a plain cast (round to nearest even)
  bf16,          // bfloat16, a plain cast
  e4m3_tensor,   // fp8 e4m3, one fp32 scale per tensor (max_finite / amax)
  e4m3_channel,  // fp8 e4m3, one fp32 scale per row (output channel)
  e2m1_tensor,   // fp4 e2m1, one fp32 scale per tensor: what microscaling improves on
  e2m1_mx,       // fp4 e2m1 with OCP MX blocks of 32 along the input dimension (MXFP4)
};

// Every format, in the order the lessons print them.
const std::vector<WeightFormat>& weight_formats();
// "fp32", "fp16", "bf16", "fp8-e4m3", "fp8-e4m3-channel", "fp4-e2m1", "fp4-e2m1-mx".
std::string name(WeightFormat format);
// By name; an unknown name is an error that lists the known ones.
WeightFormat parse_weight_format(const std::string& text);

// One weight tensor in a format.
struct QuantizedTensor {
  std::vector<float> values;  // (rows, cols): what compute reads, decoded to fp32
  int64_t code_bytes = 0;     // the elements' codes, packed
  int64_t scale_bytes = 0;    // fp32 per-tensor / per-row scales, or e8m0 MX scales
  int64_t bytes() const { return code_bytes + scale_bytes; }
};

// w: (w.size() / cols, cols) row-major, cols the input dimension.
QuantizedTensor quantize_weights(WeightFormat format, std::span<const float> w, int64_t cols);

// The whole model in one format.
struct ModelQuantization {
  WeightFormat format = WeightFormat::fp32;
  int64_t weight_values = 0;   // values of the quantized tensors (rank >= 2 parameters)
  int64_t weight_bytes = 0;    // their stored bytes, scales included
  int64_t scale_bytes = 0;     // of which scales
  int64_t bias_values = 0;     // rank-1 parameters, kept fp32
  int64_t fp32_weight_bytes() const { return 4 * weight_values; }
  int64_t total_bytes() const { return weight_bytes + 4 * bias_values; }
  double relative_error = 0;   // ||w_q − w|| / ||w|| over all quantized weights
  int64_t zeroed = 0;          // nonzero weights stored as zero (below the format's reach at their scale)
};

// Replaces every weight (parameter of rank >= 2) of `model`, on the CPU, by
// its values decoded from `format`; biases stay as they are.
ModelQuantization quantize_model(Module& model, WeightFormat format);

}  // namespace warpnet::nn
