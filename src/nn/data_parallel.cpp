#include "nn/data_parallel.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <sstream>

#include "core/memory.hpp"

namespace warpnet::nn {

Shard shard_of(int64_t global, int rank, int ranks) {
  WN_CHECK(ranks >= 1 && rank >= 0 && rank < ranks, "shard_of: rank ", rank, " of ", ranks);
  // floor(global·r/ranks): contiguous, in order, sizes differ by at most one.
  return {global * rank / ranks, global * (rank + 1) / ranks};
}

// ---- gradient buckets ------------------------------------------------------

GradientBuckets::GradientBuckets(std::vector<Parameter*> params, std::vector<int> layer_of, int64_t bucket_bytes,
                                 bool overlap)
    : params_(std::move(params)), overlap_(overlap) {
  WN_CHECK(layer_of.size() == params_.size(), "buckets: ", params_.size(), " parameters but ", layer_of.size(),
           " layer indices");
  WN_CHECK(bucket_bytes >= int64_t(sizeof(float)), "buckets: a bucket must hold at least one gradient, got ",
           bucket_bytes, " bytes");
  const int64_t cap = bucket_bytes / int64_t(sizeof(float));
  // Backward produces gradients from the last parameter to the first: fill
  // the buckets in that order, so the first bucket is the first complete.
  for (size_t k = params_.size(); k-- > 0;) {
    const Parameter& p = *params_[k];
    WN_CHECK(p.var.value().dtype() == DType::f32, "buckets: ", p.name, " is ", p.var.value().describe(),
             "; data-parallel training all-reduces f32 gradients");
    const int64_t n = p.var.value().numel();
    if (buckets_.empty() || (buckets_.back().numel > 0 && buckets_.back().numel + n > cap)) {
      buckets_.emplace_back();
      buckets_.back().first_layer = layer_of[k];
    }
    Bucket& b = buckets_.back();
    b.params.push_back(k);
    b.offsets.push_back(b.numel);
    b.numel += n;
    b.first_layer = std::min(b.first_layer, layer_of[k]);
  }
  const bool on_gpu = !params_.empty() && dist::nccl_available() &&
                      std::all_of(params_.begin(), params_.end(),
                                  [](const Parameter* p) { return p->var.value().device() == Device::cuda; });
  if (on_gpu) nccl_ = std::make_unique<dist::NcclGroup>();
  MemoryScope scope(MemTag::gradient, "allreduce buckets");
  for (Bucket& b : buckets_) {
    const int64_t length = b.numel + int64_t(b.params.size());  // the gradients, then a reached flag each
    b.buffer = on_gpu ? Tensor::zeros({length}).to(Device::cuda) : Tensor::zeros({length});
  }
}

void GradientBuckets::begin_step() {
  for (Bucket& b : buckets_) {
    WN_CHECK(!b.pending.valid(), "buckets: a step began while an all-reduce of the previous one was in flight");
    b.started = false;
  }
  next_ = 0;
}

// Copies the gradient of each parameter into the bucket, and 1 into its
// reached flag where it has a gradient, and starts the bucket's all-reduce
// (sum over ranks).
void GradientBuckets::start(Bucket& b) {
  if (nccl_) return start_on_gpu(b);
  float* out = b.buffer.data<float>();
  float* reached = out + b.numel;
  for (size_t j = 0; j < b.params.size(); ++j) {
    const Parameter& p = *params_[b.params[j]];
    float* dst = out + b.offsets[j];
    const int64_t n = p.var.value().numel();
    const Tensor& g = p.var.grad();
    reached[j] = g.defined() ? 1.0f : 0.0f;
    if (!g.defined()) {
      std::fill(dst, dst + n, 0.0f);  // no gradient reached it (or this rank's shard is empty)
      continue;
    }
    const Tensor host = g.device() == Device::cpu ? g.contiguous() : g.to(Device::cpu);
    std::memcpy(dst, host.data<float>(), static_cast<size_t>(n) * sizeof(float));
  }
  b.pending = dist::start_allreduce_sum(out, b.buffer.numel());
  b.started = true;
}

// The same on the GPU: device-to-device copies into the bucket, then NCCL
// sums the buckets over the ranks, all on the group's stream.
void GradientBuckets::start_on_gpu(Bucket& b) {
  float* out = static_cast<float*>(b.buffer.raw());
  std::vector<float> reached(b.params.size());
  for (size_t j = 0; j < b.params.size(); ++j) {
    const Parameter& p = *params_[b.params[j]];
    const Tensor& g = p.var.grad();
    reached[j] = g.defined() ? 1.0f : 0.0f;
    // A released temporary is safe to reuse: the group's stream is a
    // blocking one, so later default-stream work waits for this copy.
    const Tensor grad = g.defined() ? g : Tensor::zeros(p.var.value().shape()).to(Device::cuda);
    WN_CHECK(grad.device() == Device::cuda && grad.is_contiguous(), "buckets: the gradient of ", p.name, " is ",
             grad.describe(), "; NCCL all-reduces contiguous GPU tensors");
    nccl_->copy(out + b.offsets[j], grad.raw(), p.var.value().nbytes());
  }
  const Tensor flags = Tensor::from({int64_t(reached.size())}, reached).to(Device::cuda);
  nccl_->copy(out + b.numel, flags.raw(), flags.nbytes());
  nccl_->start_sum(out, b.buffer.numel());
  b.started = true;
}

void GradientBuckets::finish_on_gpu() {
  while (next_ < buckets_.size()) start(buckets_[next_++]);
  nccl_->synchronize();
  std::set<const Storage*> seen;
  for (Bucket& b : buckets_) {
    const float* in = static_cast<const float*>(b.buffer.raw());
    const Tensor reached = b.buffer.rows(b.numel, int64_t(b.params.size())).to(Device::cpu);
    for (size_t j = 0; j < b.params.size(); ++j) {
      if (reached.data<float>()[j] == 0.0f) continue;  // no rank reached it: left without a gradient
      Parameter& p = *params_[b.params[j]];
      Tensor& g = p.var.grad();
      if (!(g.defined() && g.device() == Device::cuda && g.is_contiguous() && seen.insert(g.storage()).second)) {
        MemoryScope scope(MemTag::gradient, p.name.substr(0, p.name.rfind('.')));
        g = Tensor::empty(p.var.value().shape(), DType::f32, Device::cuda);
        seen.insert(g.storage());
      }
      nccl_->copy(g.raw(), in + b.offsets[j], p.var.value().nbytes());
    }
  }
  nccl_->synchronize();  // the optimizer reads the gradients next
}

void GradientBuckets::layers_done_from(int layer) {
  if (!overlap_) return;
  while (next_ < buckets_.size() && buckets_[next_].first_layer >= layer) start(buckets_[next_++]);
  // Open MPI moves a non-blocking collective along only inside MPI calls.
  for (size_t i = 0; i < next_; ++i) buckets_[i].pending.test();
}

void GradientBuckets::finish() {
  if (nccl_) return finish_on_gpu();
  while (next_ < buckets_.size()) start(buckets_[next_++]);
  // Gradient tensors are fresh outputs of ops, but two parameters sharing
  // one would be overwritten by the second copy below: give those their own.
  std::set<const Storage*> seen;
  for (Bucket& b : buckets_) {
    b.pending.wait();
    const float* in = b.buffer.data<float>();
    const float* reached = in + b.numel;
    for (size_t j = 0; j < b.params.size(); ++j) {
      if (reached[j] == 0.0f) continue;  // no rank reached it: left without a gradient
      Parameter& p = *params_[b.params[j]];
      Tensor& g = p.var.grad();
      const float* src = in + b.offsets[j];
      const size_t bytes = static_cast<size_t>(p.var.value().nbytes());
      if (g.defined() && g.device() == Device::cpu && g.is_contiguous() && seen.insert(g.storage()).second) {
        std::memcpy(g.raw(), src, bytes);
        continue;
      }
      const std::string layer = p.name.substr(0, p.name.rfind('.'));
      MemoryScope scope(MemTag::gradient, layer);
      Tensor fresh = Tensor::empty(p.var.value().shape());
      std::memcpy(fresh.raw(), src, bytes);
      const Device device = p.var.value().device();
      g = device == Device::cpu ? fresh : fresh.to(device);
      seen.insert(g.storage());
    }
  }
}

std::string GradientBuckets::describe() const {
  std::ostringstream out;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    const Bucket& b = buckets_[i];
    char size[32];
    std::snprintf(size, sizeof size, "%.1f KiB", double(b.numel) * 4 / 1024.0);
    out << "  bucket " << i << ": " << size << " (";
    for (size_t j = 0; j < b.params.size(); ++j) out << (j ? " " : "") << params_[b.params[j]]->name;
    out << "), ready when backward has passed layer " << b.first_layer << '\n';
  }
  return out.str();
}

// ---- shared state ------------------------------------------------------------

namespace {

// Broadcasts a tensor's values from rank 0 in place (through the host for a
// device tensor).
void broadcast_tensor(Tensor& t) {
  if (t.device() == Device::cpu && t.is_contiguous()) {
    dist::broadcast(t.raw(), t.nbytes());
    return;
  }
  Tensor host = t.to(Device::cpu).contiguous();
  dist::broadcast(host.raw(), host.nbytes());
  t.copy_from(host.to(t.device()));
}

}  // namespace

void broadcast_training_state(Module& model, Optimizer& optimizer) {
  dist::set_activity("broadcast of rank 0's weights and optimizer state");
  for (Parameter* p : model.parameters()) broadcast_tensor(p->var.value());
  // state() hands out the optimizer's own slots (tensors share storage), in
  // name order: the same order on every rank.
  std::map<std::string, Tensor> state = optimizer.state();
  for (auto& [name, t] : state) broadcast_tensor(t);
  int64_t steps = optimizer.steps();
  dist::broadcast(&steps, sizeof steps);
  if (dist::rank() != 0 && steps != optimizer.steps()) {
    // load_state copies the slots (into themselves here: copy them first)
    // and sets the step count Adam's bias correction needs.
    std::map<std::string, Tensor> copy;
    for (auto& [name, t] : state) copy[name] = t.clone();
    optimizer.load_state(copy, steps);
  }
}

namespace {
constexpr ag::Operand kOperands[] = {ag::Operand::input, ag::Operand::weight, ag::Operand::grad_output};

// The fp8 scale of `layer`'s operand, or null where this rank has none yet.
const ag::DelayedScale* fp8_scale(const ag::MixedPrecision& policy, const std::string& layer, ag::Operand o) {
  const auto it = policy.fp8_scales().find(layer);
  return it == policy.fp8_scales().end() ? nullptr : &it->second.of(o);
}
}  // namespace

void broadcast_precision_state(ag::MixedPrecision* policy, DynamicLossScaler* scaler,
                               const std::vector<std::string>& layers) {
  dist::set_activity("broadcast of rank 0's loss scale and fp8 scales");
  if (scaler) {
    double state[3] = {scaler->scale(), double(scaler->clean_steps()), double(scaler->skipped_steps())};
    dist::broadcast(state, sizeof state);
    scaler->restore(state[0], int64_t(state[1]), int64_t(state[2]));
  }
  if (!policy || policy->precision() != ag::Precision::fp8) return;
  for (const std::string& layer : layers)
    for (ag::Operand o : kOperands) {
      // The history's length (-1: rank 0 has no scale here), then the history and the scale.
      const ag::DelayedScale* mine = fp8_scale(*policy, layer, o);
      int64_t length = mine ? int64_t(mine->history().size()) : -1;
      dist::broadcast(&length, sizeof length);
      if (length < 0) continue;
      std::vector<float> values(size_t(length) + 1);
      if (dist::rank() == 0) {
        std::copy(mine->history().begin(), mine->history().end(), values.begin());
        values.back() = mine->scale();
      }
      dist::broadcast(values.data(), int64_t(values.size() * sizeof(float)));
      policy->fp8_scales_of(layer).of(o).set_history(std::deque<float>(values.begin(), values.end() - 1),
                                                     values.back());
    }
}

Fp8AmaxSharing::Fp8AmaxSharing(std::vector<std::string> layers) : layers_(std::move(layers)) {}

void Fp8AmaxSharing::begin_step(const ag::MixedPrecision& policy) {
  recorded_.clear();
  for (const std::string& layer : layers_)
    for (ag::Operand o : kOperands) {
      const ag::DelayedScale* s = fp8_scale(policy, layer, o);
      recorded_.push_back(s ? s->recorded() : 0);
    }
}

void Fp8AmaxSharing::finish_step(ag::MixedPrecision& policy) {
  WN_CHECK(recorded_.size() == 3 * layers_.size(), "fp8 amax sharing: finish_step without begin_step");
  // This step's amax of each scale, -1 where this rank recorded none.
  std::vector<double> amax(recorded_.size(), -1.0);
  std::vector<bool> mine(recorded_.size(), false);
  for (size_t k = 0; k < recorded_.size(); ++k) {
    const std::string& layer = layers_[k / 3];
    const ag::DelayedScale* s = fp8_scale(policy, layer, kOperands[k % 3]);
    const int64_t count = (s ? s->recorded() : 0) - recorded_[k];
    WN_CHECK(count <= 1, "fp8 amax sharing: ", layer, "'s ", ag::name_of(kOperands[k % 3]), " recorded ", count,
             " amaxes in one step (one GEMM a layer, one record a step)");
    mine[k] = count == 1;
    if (mine[k]) amax[k] = s->history().back();
  }
  dist::set_activity("the fp8 amax all-reduce (max)");
  dist::allreduce_max(amax.data(), int64_t(amax.size()));
  for (size_t k = 0; k < recorded_.size(); ++k) {
    if (amax[k] < 0) continue;  // no rank has this scale (a layer without a GEMM)
    ag::DelayedScale& s = policy.fp8_scales_of(layers_[k / 3]).of(kOperands[k % 3]);
    if (mine[k]) s.revise_newest(float(amax[k]));
    else s.record(float(amax[k]));
  }
}

uint64_t weights_fingerprint(Module& model) {
  // FNV-1a over the bytes, 64-bit.
  uint64_t h = 1469598103934665603ull;
  for (Parameter* p : model.parameters()) {
    const Tensor host = p->var.value().to(Device::cpu).contiguous();
    const unsigned char* bytes = static_cast<const unsigned char*>(host.raw());
    for (int64_t i = 0; i < host.nbytes(); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  }
  return h;
}

// ---- staged faults, for the tests ------------------------------------------

InjectedFault parse_fault(const std::string& spec) {
  InjectedFault f;
  if (spec.empty()) return f;
  std::stringstream in(spec);
  for (std::string item; std::getline(in, item, ',');) {
    const size_t eq = item.find('=');
    WN_CHECK(eq != std::string::npos, "--inject-fault: '", item, "' is not key=value (rank=1,step=3,kind=exit)");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "rank") f.rank = std::stoi(value);
    else if (key == "step") f.step = std::stoll(value);
    else if (key == "kind") f.kind = value;
    else fail("--inject-fault: unknown key '", key, "' (rank, step, kind)");
  }
  WN_CHECK(f.rank >= 0 && f.step >= 1, "--inject-fault: needs rank >= 0 and step >= 1, got '", spec, "'");
  WN_CHECK(f.kind == "exit" || f.kind == "hang" || f.kind == "error", "--inject-fault: kind is exit, hang or error, got '",
           f.kind, "'");
  return f;
}

void maybe_inject(const InjectedFault& fault, int64_t step) {
  if (!fault.armed() || fault.rank != dist::rank() || fault.step != step) return;
  const std::string who = dist::whoami().empty() ? "" : dist::whoami() + ": ";
  if (fault.kind == "error") fail("injected fault at step ", step);
  if (fault.kind == "exit") {
    std::fprintf(stderr, "warpnet: %sinjected fault: exiting at step %lld without a word to the other ranks\n",
                 who.c_str(), static_cast<long long>(step));
    std::fflush(stderr);
    std::_Exit(3);
  }
  std::fprintf(stderr, "warpnet: %sinjected fault: hanging at step %lld\n", who.c_str(), static_cast<long long>(step));
  std::fflush(stderr);
  dist::set_activity(cat("an injected hang at step ", step));
  for (;;) ::pause();
}

}  // namespace warpnet::nn
