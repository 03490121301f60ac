// Mixed precision, emulated: what a matmul or convolution sees of its
// operands, and in what format activations are kept, for each training
// precision warpnet knows.
//
//   fp32  everything in fp32 (no scope active behaves the same)
//   tf32  matmul/conv inputs rounded to tf32 (10 mantissa bits), fp32
//         accumulation and everything else fp32: what Ampere and later do
//         for an fp32 GEMM when TF32 is allowed (cuBLAS's
//         CUBLAS_TF32_TENSOR_OP_MATH; off by default there and in PyTorch)
//   bf16  the inputs of every matmul/conv (activations, and a bf16 copy of
//   fp16  the fp32 master weights) rounded to the format, fp32 accumulation
//         as tensor cores do; every activation an op produces (the loss
//         aside) is stored in the format, as autocast does; the gradient
//         entering a matmul/conv backward is rounded to the format too.
//         fp16 needs loss scaling (nn/loss_scaler.hpp), bf16 does not.
//   fp8   Transformer Engine's recipe in miniature: forward matmul/conv
//         inputs in e4m3, the gradient entering their backward in e5m2, each
//         tensor with its own per-tensor delayed scale (DelayedScale below);
//         activations between layers, master weights, optimizer, loss and
//         softmax in fp32.
//
// Quantization is simulated: values are rounded with src/numeric's bit-exact
// encode/decode (round to nearest even; fp8 saturates), looked up in a table
// of its answers (rounding_table.hpp), and kept in fp32 words, so the
// arithmetic gives low precision's accuracy effects, not its speed. The
// memory tracker counts such a tensor at the format's width (ValueWidthScope,
// core/memory.hpp): what the bytes would be on a GPU.
#pragma once
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"
#include "numeric/format.hpp"

namespace warpnet::ag {

enum class Precision : uint8_t { fp32, tf32, bf16, fp16, fp8 };

std::string_view name_of(Precision p);
// "fp32", "tf32", "bf16", "fp16", "fp8"; anything else is an error naming them.
Precision parse_precision(std::string_view name);
const std::vector<std::string>& precision_names();

// The three tensors a matmul or convolution multiplies: in the forward the
// input activation and the weight, in the backward the output's gradient.
enum class Operand : uint8_t { input, weight, grad_output };
std::string_view name_of(Operand o);

// Per-tensor delayed scaling (Transformer Engine's DelayedScaling): the scale
// used at step t comes from the largest |value| seen over the previous
// `window` steps, scale = max_finite / (amax · 2^margin), so a tensor's
// quantization needs no pass over itself before it is cast. Before any step
// has been seen the scale is 1; when the window's amax is 0 (a gradient that
// was zero throughout) or not finite (an overflow), the scale stays what it
// was — Transformer Engine's rules, both.
class DelayedScale {
 public:
  DelayedScale(const numeric::Format& format, int window, int margin);
  const numeric::Format& format() const { return *format_; }
  float scale() const { return scale_; }  // for the next tensor
  void record(float amax);                // this step's amax; drops the oldest past the window
  const std::deque<float>& history() const { return history_; }  // oldest first
  // Data-parallel training: how many amaxes this scale has recorded since
  // it was made (a step records one), and the newest replaced by the largest
  // any rank recorded in that step (nn/data_parallel.hpp, Fp8AmaxSharing).
  int64_t recorded() const { return recorded_; }
  void revise_newest(float amax);
  // Checkpoints: the history, and the scale when saved (older checkpoints
  // hold none: it is then computed from the history, from 1).
  void set_history(std::deque<float> history, std::optional<float> scale = std::nullopt);

 private:
  void update_scale();
  const numeric::Format* format_;
  int window_, margin_;
  std::deque<float> history_;
  float scale_ = 1.0f;
  float scale_before_newest_ = 1.0f;  // what revise_newest starts again from
  int64_t recorded_ = 0;
};

// The delayed scales of one matmul/conv: e4m3 for the input and the weight,
// e5m2 for the output's gradient.
struct Fp8Scales {
  DelayedScale input, weight, grad_output;
  DelayedScale& of(Operand o);
  const DelayedScale& of(Operand o) const;
};

struct Fp8Options {
  int window = 16;  // steps of amax history
  int margin = 0;   // scale down by 2^margin for headroom
};

// x rounded to `format` (nearest even) into a new fp32 tensor, or x itself
// when every value is already in the format (a bf16 activation is used as it
// is, as on a GPU). Saturating for the fp8 formats, inf past fp16's max.
Tensor round_to_format(const Tensor& x, const numeric::Format& format);
// The same, overwriting x (contiguous, f32, on the CPU).
void round_in_place(Tensor& x, const numeric::Format& format);
// x·scale rounded to an fp8 format (saturating), divided by scale again:
// the values an fp8 GEMM multiplies, in the units of x.
Tensor quantize_scaled(const Tensor& x, const numeric::Format& format, float scale);
// Largest |value| of an f32 tensor; inf when a value is inf or NaN (an
// overflow the delayed scale must not take for a small amax).
float amax_of(const Tensor& x);

// The active precision policy: the GEMM ops of functions.hpp ask it for
// their operands and every op for the form its output is kept in. It holds
// the fp8 scales of each layer, keyed by the layer that runs the op (the
// memory context's layer, as the tape's gradients are charged): one GEMM
// per layer, which every model here has.
class MixedPrecision {
 public:
  explicit MixedPrecision(Precision precision, Fp8Options fp8 = {});
  Precision precision() const { return precision_; }
  // The format matmul/conv inputs are rounded to, null for fp32 (fp8: e4m3).
  const numeric::Format* operand_format(Operand o) const;
  // The format activations are stored in, null when they stay fp32.
  const numeric::Format* activation_format() const;

  // What the GEMM of `layer` multiplies for this operand: t rounded (tf32,
  // bf16, fp16) or scaled and quantized (fp8), a copy counted at the
  // format's width (a parameter's copy as parameter memory); t itself for
  // fp32, or when t is in the format already. `training`: record this
  // step's amax in the fp8 history (evaluation reads the scales and leaves
  // them alone).
  Tensor operand(const Tensor& t, Operand o, const std::string& layer, bool training);
  // An op's output as it is kept: rounded to bf16/fp16 in place (y is the
  // op's own new tensor, as a GPU kernel would write bf16 directly);
  // unchanged for the other precisions.
  void keep_as_activation(Tensor& y) const;
  // What an activation value counts in the memory tracker: 2 for bf16 and
  // fp16, 4 otherwise. Ops compute their forward inside a ValueWidthScope of
  // this width (core/memory.hpp).
  int64_t activation_bytes() const;

  const std::map<std::string, Fp8Scales>& fp8_scales() const { return fp8_; }
  std::map<std::string, Fp8Scales>& fp8_scales() { return fp8_; }
  Fp8Scales& fp8_scales_of(const std::string& layer);

  // The policy ops consult on this thread; null means fp32.
  static MixedPrecision* active();

 private:
  Precision precision_;
  Fp8Options fp8_options_;
  std::map<std::string, Fp8Scales> fp8_;
};

// RAII: ops inside the scope follow `policy` (null: fp32).
class PrecisionScope {
 public:
  explicit PrecisionScope(MixedPrecision* policy);
  ~PrecisionScope();
  PrecisionScope(const PrecisionScope&) = delete;
  PrecisionScope& operator=(const PrecisionScope&) = delete;

 private:
  MixedPrecision* saved_;
};

}  // namespace warpnet::ag
