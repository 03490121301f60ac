#include "nn/layers.hpp"

#include <cmath>

#include "core/memory.hpp"
#include "kernels/common/counter_hash.hpp"

namespace warpnet::nn {

namespace {
// PyTorch's default initialisation: uniform in ±1/√fan_in for weights and
// biases, so warpnet and PyTorch start from comparable weights.
void init_uniform(Parameter& p, double fan_in, Rng& rng) {
  const double bound = 1.0 / std::sqrt(fan_in);
  fill_uniform(p.var.value(), rng, -bound, bound);
}

OpCost bias_cost(int64_t count) { return elementwise_cost(count, 1); }

// A folded layer's bias and ReLU (Sequential::fold_bias_relu) after its
// product: relu(product + b). The product's values are read by no backward
// (the layer's reads its input and weights, bias_relu's its output), so they
// are freed here instead of living to the end of backward: folding saves
// the memory of one activation per layer, the bytes a ReLU otherwise keeps.
ag::Var bias_relu_dropping(ag::Var product, const ag::Var& bias) {
  ag::Var y = ag::bias_relu(product, bias);
  product.drop_value();
  return y;
}
}  // namespace

// ---- Linear -------------------------------------------------------------

Linear::Linear(std::string name, int64_t in, int64_t out, Rng& rng, bool bias)
    : Module(std::move(name)), in_(in), out_(out) {
  weight_ = make_parameter("weight", {out, in});
  init_uniform(weight_, double(in), rng);
  if (bias) {
    bias_ = make_parameter("bias", {out});
    init_uniform(bias_, double(in), rng);
  }
}

std::vector<Parameter*> Linear::parameters() {
  std::vector<Parameter*> ps{&weight_};
  if (bias_.var.defined()) ps.push_back(&bias_);
  return ps;
}

Shape Linear::output_shape(const Shape& input) const {
  WN_CHECK(input.rank() == 2 && input[1] == in_, name(), ": expects (N,", in_, "), got ", input);
  return {input[0], out_};
}

OpCost Linear::cost(const Shape& input) const {
  OpCost c = matmul_cost(input[0], out_, in_);
  if (bias_.var.defined()) c += bias_cost(input[0] * out_);
  return c;
}

std::string Linear::describe() const { return cat("Linear(", in_, "→", out_, ")"); }

ag::Var Linear::forward(const ag::Var& x) {
  output_shape(x.shape());
  if (fold_relu_) return bias_relu_dropping(ag::linear(x, weight_.var, ag::Var()), bias_.var);
  return ag::linear(x, weight_.var, bias_.var);
}

// ---- Conv2d -------------------------------------------------------------

Conv2d::Conv2d(std::string name, int64_t in_channels, int64_t out_channels, int kernel, Rng& rng,
               cpu::Conv2dParams params, bool bias)
    : Module(std::move(name)), in_(in_channels), out_(out_channels), kernel_(kernel), params_(params) {
  const double fan_in = double(in_channels) * kernel * kernel;
  weight_ = make_parameter("weight", {out_channels, in_channels, kernel, kernel});
  init_uniform(weight_, fan_in, rng);
  if (bias) {
    bias_ = make_parameter("bias", {out_channels});
    init_uniform(bias_, fan_in, rng);
  }
}

std::vector<Parameter*> Conv2d::parameters() {
  std::vector<Parameter*> ps{&weight_};
  if (bias_.var.defined()) ps.push_back(&bias_);
  return ps;
}

Shape Conv2d::output_shape(const Shape& input) const {
  WN_CHECK(input.rank() == 4 && input[1] == in_, name(), ": expects (N,", in_, ",H,W), got ", input);
  return {input[0], out_, cpu::conv_out_size(input[2], kernel_, params_),
          cpu::conv_out_size(input[3], kernel_, params_)};
}

OpCost Conv2d::cost(const Shape& input) const {
  Shape out = output_shape(input);
  OpCost c = conv2d_cost(input[0], in_, input[2], input[3], out_, kernel_, kernel_, out[2], out[3]);
  if (bias_.var.defined()) c += bias_cost(out.numel());
  return c;
}

std::string Conv2d::describe() const {
  std::string s = cat("Conv2d(", in_, "→", out_, ", ", kernel_, "×", kernel_);
  if (params_.stride != 1) s += cat(", stride ", params_.stride);
  if (params_.padding != 0) s += cat(", pad ", params_.padding);
  if (params_.dilation != 1) s += cat(", dilation ", params_.dilation);
  return s + ")";
}

ag::Var Conv2d::forward(const ag::Var& x) {
  output_shape(x.shape());
  if (fold_relu_) return bias_relu_dropping(ag::conv2d(x, weight_.var, ag::Var(), params_), bias_.var);
  return ag::conv2d(x, weight_.var, bias_.var, params_);
}

// ---- activations ----------------------------------------------------------

OpCost Act::cost(const Shape& input) const {
  // Rough per-value FLOPs: a compare for ReLU; GELU/tanh/sigmoid evaluate an
  // exponential (counted as ~10) plus a few multiply-adds.
  const double per_value = kind_ == Activation::relu ? 1 : kind_ == Activation::gelu ? 16 : 12;
  return elementwise_cost(input.numel(), per_value);
}

std::string Act::describe() const {
  if (!folded_into_.empty()) return cat("ReLU (folded into ", folded_into_, ")");
  switch (kind_) {
    case Activation::relu: return "ReLU";
    case Activation::gelu: return "GELU";
    case Activation::sigmoid: return "Sigmoid";
    case Activation::tanh: return "Tanh";
  }
  return "?";
}

ag::Var Act::forward(const ag::Var& x) {
  if (!folded_into_.empty()) return x;  // the layer before applied it
  switch (kind_) {
    case Activation::relu: return ag::relu(x);
    case Activation::gelu: return ag::gelu(x);
    case Activation::sigmoid: return ag::sigmoid(x);
    case Activation::tanh: return ag::tanh(x);
  }
  fail(name(), ": unknown activation");
}

// ---- pooling ----------------------------------------------------------------

Shape Pool2d::output_shape(const Shape& input) const {
  WN_CHECK(input.rank() == 4, name(), ": expects (N,C,H,W), got ", input);
  const cpu::Conv2dParams as_conv{params_.stride, params_.padding, 1};
  return {input[0], input[1], cpu::conv_out_size(input[2], params_.kernel, as_conv),
          cpu::conv_out_size(input[3], params_.kernel, as_conv)};
}

OpCost Pool2d::cost(const Shape& input) const {
  Shape out = output_shape(input);
  return pool2d_cost(input[0], input[1], input[2], input[3], int64_t(params_.kernel) * params_.kernel, out[2],
                     out[3]);
}

std::string Pool2d::describe() const {
  return cat(kind_ == PoolKind::max ? "MaxPool2d(" : "AvgPool2d(", params_.kernel, "×", params_.kernel,
             params_.stride != params_.kernel ? cat(", stride ", params_.stride) : std::string(),
             params_.padding ? cat(", pad ", params_.padding) : std::string(), ")");
}

ag::Var Pool2d::forward(const ag::Var& x) {
  return kind_ == PoolKind::max ? ag::max_pool2d(x, params_) : ag::avg_pool2d(x, params_);
}

// ---- Flatten, Dropout -------------------------------------------------------

Shape Flatten::output_shape(const Shape& input) const {
  WN_CHECK(input.rank() >= 2, name(), ": expects (N, ...), got ", input);
  return {input[0], input.numel() / std::max<int64_t>(input[0], 1)};
}

ag::Var Flatten::forward(const ag::Var& x) { return ag::flatten(x); }

Dropout::Dropout(std::string name, double p, uint64_t seed) : Module(std::move(name)), p_(p), seed_(seed) {
  WN_CHECK(p >= 0.0 && p < 1.0, this->name(), ": dropout probability must be in [0,1), got ", p);
}

std::string Dropout::describe() const { return cat("Dropout(p=", p_, ")"); }

uint64_t Dropout::seed_of_step(int64_t number) const {
  // Two 32-bit draws of the counter-based stream of the layer's seed.
  const uint64_t i = 2 * uint64_t(number);
  return uint64_t(counter_hash(seed_, i)) << 32 | counter_hash(seed_, i + 1);
}

void Dropout::draw_ahead(Device device, int64_t first) {
  Tensor table = Tensor::empty({kAheadSteps, 2}, DType::i32);  // each row a seed's words
  for (int64_t k = 0; k < kAheadSteps; ++k)
    table.rows(k, 1).copy_from(cpu::dropout_seed_words(seed_of_step(first + k)).reshape({1, 2}));
  if (ahead_.defined() && ahead_.device() == device) {
    ahead_.copy_from(table);  // waits for the queued steps, which read the old rows
  } else {
    MemoryScope scope(MemTag::other, name());
    ahead_ = table.to(device);
  }
  ahead_first_ = first;
}

void Dropout::prepare_step(Device device, const Step& step, bool queued) {
  prepared_ = true;
  first_row_ = step.first_row;
  step_seed_.value = p_ == 0.0 ? 0 : seed_of_step(step.number);
  if (device == Device::cpu) return;
  const auto in_table = [&] {
    return ahead_.defined() && ahead_.device() == device && step.number >= ahead_first_ &&
           step.number < ahead_first_ + kAheadSteps;
  };
  if (p_ != 0.0 && queued && !in_table()) draw_ahead(device, step.number);
  const Tensor words = cpu::dropout_seed_words(step_seed_.value);
  if (!step_seed_.on_device.defined() || step_seed_.on_device.device() != device) {
    MemoryScope scope(MemTag::other, name());
    step_seed_.on_device = words.to(device);
  } else if (p_ == 0.0) {
    // Always 0 (nothing is dropped): written once.
  } else if (queued) {  // on the device, from the table
    step_seed_.on_device.copy_from(ahead_.rows(step.number - ahead_first_, 1).reshape(words.shape()));
  } else {
    step_seed_.on_device.copy_from(words);  // the same buffer: a captured step reads it
  }
}

ag::Var Dropout::forward(const ag::Var& x) {
  if (!training() || p_ == 0.0) return x;
  if (!prepared_) prepare_step(x.value().device(), {unprepared_steps_++, 0});  // used outside a trainer's step
  prepared_ = false;
  if (first_row_ == 0 || x.value().numel() == 0) return ag::dropout(x, p_, step_seed_, training());
  // A data-parallel shard of rows first_row_..: their part of the whole
  // batch's mask, element first_row_·(row size) on of the step's stream.
  // Eager steps only (a captured step holds every row).
  const Tensor& v = x.value();
  const uint64_t first = uint64_t(first_row_) * uint64_t(v.numel() / v.dim(0));
  dispatch::DropoutSeed shard{counter_stream_from(step_seed_.value, first), {}};
  if (v.device() != Device::cpu) {
    MemoryScope scope(MemTag::other, name());
    shard.on_device = cpu::dropout_seed_words(shard.value).to(v.device());
  }
  return ag::dropout(x, p_, shard, training());
}

// ---- Sequential ---------------------------------------------------------------

std::vector<Parameter*> Sequential::parameters() {
  std::vector<Parameter*> ps;
  for (auto& layer : layers_)
    for (Parameter* p : layer->parameters()) ps.push_back(p);
  return ps;
}

void Sequential::prepare_step(Device device, const Step& step, bool queued) {
  for (auto& layer : layers_) layer->prepare_step(device, step, queued);
}

void Sequential::set_training(bool training) {
  Module::set_training(training);
  for (auto& layer : layers_) layer->set_training(training);
}

Shape Sequential::output_shape(const Shape& input) const {
  Shape s = input;
  for (const auto& layer : layers_) s = layer->output_shape(s);
  return s;
}

OpCost Sequential::cost(const Shape& input) const {
  OpCost total;
  Shape s = input;
  for (const auto& layer : layers_) {
    total += layer->cost(s);
    s = layer->output_shape(s);
  }
  return total;
}

std::string Sequential::describe() const {
  std::string s = name() + ":";
  for (const auto& layer : layers_) s += cat("\n  ", layer->name(), ": ", layer->describe());
  return s;
}

int Sequential::fold_bias_relu() {
  int folded = 0;
  for (size_t i = 0; i + 1 < layers_.size(); ++i) {
    auto* act = dynamic_cast<Act*>(layers_[i + 1].get());
    if (!act || act->kind() != Activation::relu) continue;
    Module& layer = *layers_[i];
    if (auto* conv = dynamic_cast<Conv2d*>(&layer); conv && conv->has_bias()) {
      conv->fold_relu();
    } else if (auto* linear = dynamic_cast<Linear*>(&layer); linear && linear->has_bias()) {
      linear->fold_relu();
    } else {
      continue;
    }
    act->fold_into(layer.name());
    ++folded;
  }
  return folded;
}

ag::Var Sequential::forward(const ag::Var& x) {
  ag::Var h = x;
  for (auto& layer : layers_) h = (*layer)(h);
  return h;
}

}  // namespace warpnet::nn
