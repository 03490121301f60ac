#include "nn/optim.hpp"

#include <array>
#include <cfloat>
#include <cmath>

#include "core/memory.hpp"
#include "device/dispatch.hpp"

namespace warpnet::nn {

namespace {
// The layer a parameter belongs to: "conv1.weight" → "conv1".
std::string layer_of(const Parameter& p) { return p.name.substr(0, p.name.rfind('.')); }

// Calls fn(Tensor& w, Tensor& g, size_t index) for every parameter
// with a gradient; parameters that got none (unused in the graph) are skipped.
template <class Fn>
void for_each_update(const std::vector<Parameter*>& params, Fn&& fn) {
  for (size_t i = 0; i < params.size(); ++i) {
    ag::Var& var = params[i]->var;
    if (!var.grad().defined()) continue;
    fn(var.value(), var.grad(), i);
  }
}
}  // namespace

void Optimizer::prepare_step(bool queued) {
  ++steps_;
  write_hyper(queued);
}

void Optimizer::write_hyper(bool queued) {
  std::vector<double> values = hyper_at(steps_);
  // Unchanged (SGD at a fixed rate, every step): the device copy holds them
  // already, and a copy from pageable host memory would first wait for
  // everything queued on the device, the previous step included.
  if (hyper_.on_device.defined() && values == hyper_.values) return;
  const Device device = params_.empty() ? Device::cpu : params_.front()->var.value().device();
  if (device != Device::cpu) {
    const auto n = int64_t(values.size());
    if (!hyper_.on_device.defined()) {
      MemoryScope scope(MemTag::optimizer, "hyperparameters");
      hyper_.on_device = Tensor::empty({n}, DType::f32, device);
    }
    if (!queued) {
      Tensor host = Tensor::empty({n});
      for (int64_t i = 0; i < n; ++i) host.set(i, values[size_t(i)]);
      hyper_.on_device.copy_from(host);  // the same buffer: a captured step reads it
    } else {
      // The next kAheadSteps steps' values in one copy from the host, made
      // again when they run out or no longer hold (the rate was changed).
      const int64_t row = steps_ - ahead_first_;
      if (!ahead_.defined() || row < 0 || row >= kAheadSteps || ahead_values_[size_t(row)] != values) {
        ahead_first_ = steps_;
        ahead_values_.clear();
        Tensor host = Tensor::empty({kAheadSteps, n});
        for (int64_t k = 0; k < kAheadSteps; ++k) {
          ahead_values_.push_back(hyper_at(steps_ + k));
          for (int64_t i = 0; i < n; ++i) host.set(k * n + i, ahead_values_.back()[size_t(i)]);
        }
        if (!ahead_.defined()) {
          MemoryScope scope(MemTag::optimizer, "hyperparameters");
          ahead_ = host.to(device);
        } else {
          ahead_.copy_from(host);  // waits for the queued steps, which read the old rows
        }
      }
      hyper_.on_device.copy_from(ahead_.rows(steps_ - ahead_first_, 1).reshape({n}));  // on the device: queued
    }
  }
  hyper_.values = std::move(values);
}

void Optimizer::zero_grad() {
  for (Parameter* p : params_) p->var.grad() = Tensor();
}

Tensor Optimizer::make_slot(const Parameter& p) {
  MemoryScope scope(MemTag::optimizer, layer_of(p));
  return Tensor::zeros(p.var.shape(), p.var.value().dtype()).to(p.var.value().device());  // the tag carries over
}

void Optimizer::restore_slot(const std::map<std::string, Tensor>& state, const std::string& key, Tensor& slot) {
  auto it = state.find(key);
  WN_CHECK(it != state.end(), "optimizer: the checkpoint has no state '", key, "'");
  WN_CHECK(it->second.shape() == slot.shape() && it->second.dtype() == slot.dtype(), "optimizer: state '", key,
           "' is ", it->second.describe(), " in the checkpoint but ", slot.describe(), " here");
  slot.copy_from(it->second);
}

// ---- SGD ------------------------------------------------------------------

Sgd::Sgd(std::vector<Parameter*> params, double lr, double momentum, double weight_decay)
    : Optimizer(std::move(params), lr), momentum_(momentum), weight_decay_(weight_decay) {
  for (Parameter* p : params_) velocity_.push_back(make_slot(*p));
}

// The update itself is dispatch::sgd_momentum_update: cpu::sgd_momentum_update
// (the device kernels' reference too) or the kernel, where the weights live.
std::vector<double> Sgd::hyper_at(int64_t) const { return {lr_, momentum_, weight_decay_}; }

void Sgd::apply_step() {
  std::vector<std::array<Tensor*, 3>> updates;
  for_each_update(params_, [&](Tensor& w, Tensor& g, size_t i) { updates.push_back({&w, &velocity_[i], &g}); });
  dispatch::sgd_momentum_update(updates, hyper_);
}

std::map<std::string, Tensor> Sgd::state() const {
  std::map<std::string, Tensor> s;
  for (size_t i = 0; i < params_.size(); ++i) s[params_[i]->name + "/velocity"] = velocity_[i];
  return s;
}

void Sgd::load_state(const std::map<std::string, Tensor>& state, int64_t steps) {
  for (size_t i = 0; i < params_.size(); ++i) restore_slot(state, params_[i]->name + "/velocity", velocity_[i]);
  steps_ = steps;
}

// ---- Adam -----------------------------------------------------------------

Adam::Adam(std::vector<Parameter*> params, double lr, double beta1, double beta2, double eps)
    : Optimizer(std::move(params), lr), beta1_(beta1), beta2_(beta2), eps_(eps) {
  for (Parameter* p : params_) {
    m_.push_back(make_slot(*p));
    v_.push_back(make_slot(*p));
  }
}

std::vector<double> Adam::hyper_at(int64_t step) const {
  // Bias correction folded into the step size, as in the paper's Algorithm 1.
  const double c1 = 1.0 - std::pow(beta1_, double(step));
  const double c2 = 1.0 - std::pow(beta2_, double(step));
  return {lr_ * std::sqrt(c2) / c1, beta1_, beta2_, eps_ * std::sqrt(c2)};
}

// The update itself is dispatch::adam_update, as for SGD.
void Adam::apply_step() {
  std::vector<std::array<Tensor*, 4>> updates;
  for_each_update(params_, [&](Tensor& w, Tensor& g, size_t i) { updates.push_back({&w, &m_[i], &v_[i], &g}); });
  dispatch::adam_update(updates, hyper_);
}

std::map<std::string, Tensor> Adam::state() const {
  std::map<std::string, Tensor> s;
  for (size_t i = 0; i < params_.size(); ++i) {
    s[params_[i]->name + "/m"] = m_[i];
    s[params_[i]->name + "/v"] = v_[i];
  }
  return s;
}

void Adam::load_state(const std::map<std::string, Tensor>& state, int64_t steps) {
  for (size_t i = 0; i < params_.size(); ++i) {
    restore_slot(state, params_[i]->name + "/m", m_[i]);
    restore_slot(state, params_[i]->name + "/v", v_[i]);
    // v averages squared gradients: below 0 only in a forged file, and the
    // update's sqrt(v) would turn it into NaN weights.
    const Tensor& v = state.at(params_[i]->name + "/v");  // the checkpoint's, on the host
    for (int64_t e = 0; e < v.numel(); ++e)
      WN_CHECK(v.item(e) >= 0, "optimizer: state '", params_[i]->name, "/v' (Adam's mean of squared gradients) is ",
               v.item(e), " at element ", e, "; it cannot be negative");
  }
  steps_ = steps;
}

std::unique_ptr<Optimizer> make_optimizer(const std::string& name, std::vector<Parameter*> params, double lr,
                                          double momentum, double weight_decay) {
  // The kernels hold the learning rate in float; a denormal one reads as zero.
  WN_CHECK(lr >= FLT_MIN && lr <= FLT_MAX, "optimizer: learning rate must be a positive float (", FLT_MIN, " to ",
           FLT_MAX, "), got ", lr);
  WN_CHECK(weight_decay >= 0 && std::isfinite(weight_decay), "optimizer: weight decay must be >= 0, got ",
           weight_decay);
  if (name == "sgd") return std::make_unique<Sgd>(std::move(params), lr, momentum, weight_decay);
  if (name == "adam") {
    WN_CHECK(weight_decay == 0, "optimizer: adam takes no weight decay here (got ", weight_decay,
             "); sgd does, as L2 in the gradient");
    return std::make_unique<Adam>(std::move(params), lr);
  }
  fail("unknown optimizer '", name, "' (choose sgd or adam)");
}

}  // namespace warpnet::nn
