// Lesson 06: backprop and memory. Where the bytes of one training step go —
// parameters, activations kept for backward, gradients, optimizer state,
// workspace — read from the memory tracker while the step runs:
//   1. a timeline of live bytes by tag after each layer's forward and backward
//   2. what each layer keeps for backward, and which kept values backward reads
//   3. the batch size: what grows with it, bytes per example, the largest batch
//      that fits an H100's or an H200's memory (computed from the measurement)
//   4. optimizer state: SGD with momentum one slot, Adam two
//   5. precision: f32 and f64 measured; bf16, fp16 and fp8 computed
//   6. recomputation (activation checkpointing): the arithmetic
// Every measured figure is checked against its formula; the program exits 1
// when one disagrees.
//
//   build/bin/lesson06            # the whole chapter: about 1 s on 2 idle cores
//   build/bin/lesson06 --quick    # smaller batches; what `ctest -R lesson06` runs
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "autograd/functions.hpp"
#include "core/text.hpp"
#include "datasets/synthetic.hpp"
#include "device/datasheet.hpp"
#include "nn/models.hpp"
#include "nn/optim.hpp"
#include "lessons/lesson_args.hpp"

using namespace warpnet;

namespace {

constexpr int64_t kClasses = 10;
const Shape kImage{1, 28, 28};

// ---- reading the tracker ----------------------------------------------------------

// Bytes by tag at one moment of the step, and the most that were alive at once
// since the previous sample (the phase peak).
struct Sample {
  std::string label;  // "fwd conv1", "bwd conv1", ...
  std::array<int64_t, kMemTagCount> live{}, peak{};
  int64_t total = 0, total_peak = 0;
};

MemoryTracker& tracker() { return MemoryTracker::instance(); }

// The tracker read relative to where it stood when the probe was made, so
// bytes alive before the step (none, in this program) do not count.
class Probe {
 public:
  Probe() {
    tracker().reset_peaks();
    for (int t = 0; t < kMemTagCount; ++t) start_[t] = tracker().tag(MemTag(t)).current;
    total_start_ = tracker().total().current;
  }
  int64_t live(MemTag t) const { return tracker().tag(t).current - start_[int(t)]; }
  // Reads every tag, then restarts the peaks: the next sample's peak is that of
  // the phase in between.
  Sample take(std::string label) const {
    Sample s{std::move(label)};
    for (int t = 0; t < kMemTagCount; ++t) {
      s.live[t] = tracker().tag(MemTag(t)).current - start_[t];
      s.peak[t] = tracker().tag(MemTag(t)).peak - start_[t];
    }
    s.total = tracker().total().current - total_start_;
    s.total_peak = tracker().total().peak - total_start_;
    tracker().reset_peaks();
    return s;
  }

 private:
  std::array<int64_t, kMemTagCount> start_{};
  int64_t total_start_ = 0;
};

// The bytes of one tag the tracker charges to `layer` now (its row, by name).
int64_t layer_bytes(const std::string& layer, MemTag tag) {
  for (const MemRow& row : tracker().layers())
    if (row.layer == layer) return row.by_tag[int(tag)].current;
  return 0;
}

// ---- what a layer keeps, by the code of src/autograd/functions.cpp ----------------

enum class Kind { conv, linear, relu, max_pool, flatten, dropout, loss };

Kind kind_of(const nn::Module& m) {
  if (dynamic_cast<const nn::Conv2d*>(&m)) return Kind::conv;
  if (dynamic_cast<const nn::Linear*>(&m)) return Kind::linear;
  if (dynamic_cast<const nn::ReLU*>(&m)) return Kind::relu;
  if (dynamic_cast<const nn::MaxPool2d*>(&m)) return Kind::max_pool;
  if (dynamic_cast<const nn::Flatten*>(&m)) return Kind::flatten;
  if (dynamic_cast<const nn::Dropout*>(&m)) return Kind::dropout;
  fail("lesson06: no memory formula for layer ", m.name(), " (", m.describe(), ")");
}

// What the forward of a layer leaves alive, as a formula of its output shape.
struct Keep {
  int64_t bytes = 0;
  int64_t output_bytes = 0;  // of which the output itself (0 for a view)
  int64_t index_bytes = 0;   // of which i32 argmax: 4 B whatever the float type
  const char* formula = "";
};

Keep expected_keep(Kind kind, const Shape& out, DType dtype) {
  const int64_t n = out.numel(), e = int64_t(size_of(dtype));
  switch (kind) {
    case Kind::conv:
    case Kind::linear:
    case Kind::relu: return {n * e, n * e, 0, "output"};
    case Kind::max_pool: return {n * e + n * 4, n * e, n * 4, "output + argmax (i32)"};
    case Kind::flatten: return {0, 0, 0, "nothing: a view of its input"};
    case Kind::dropout: return {2 * n * e, n * e, 0, "output + mask"};
    case Kind::loss: return {n * e + e, e, 0, "probabilities + loss value"};
  }
  return {};
}

// What the layer's backward reads (functions.cpp), and whether that includes
// the values of its input — which are the previous layer's output.
const char* backward_reads(Kind kind) {
  switch (kind) {
    case Kind::conv: return "x (for dW), W (for dx)";
    case Kind::linear: return "x (for dW), W (for dx)";
    case Kind::relu: return "x: its sign gates dy";
    case Kind::max_pool: return "argmax, the shape of x";
    case Kind::flatten: return "the shape of x";
    case Kind::dropout: return "the mask";
    case Kind::loss: return "p: dlogits = (p − onehot)/N";
  }
  return "";
}
bool reads_input_values(Kind kind) { return kind == Kind::conv || kind == Kind::linear || kind == Kind::relu; }

// ---- one training step, sampled ------------------------------------------------------

struct StepOptions {
  std::string model = "lenet5";
  int64_t batch = 64;
  DType dtype = DType::f32;
  std::string optimizer = "adam";  // "none", "sgd" (momentum 0.9) or "adam"
  int poison = -1;                 // part 2: this layer's output is set to NaN before backward
};

struct LayerRecord {
  std::string name;
  Kind kind;
  Shape output;
  int64_t kept = 0;          // activation bytes its forward left alive (measured)
  Keep expected;             // ... and by formula
  int64_t level_before = 0;  // live activations just before its forward
  int64_t row_before = 0;    // the tracker's activation bytes for this layer, then
  bool freed = false;        // its backward put both back (checked in the tape)
  bool output_read = false;  // some backward reads its output's values (by the code)
};

struct StepResult {
  int64_t parameter_count = 0;
  int64_t parameters = 0, optimizer = 0, inputs = 0;  // alive for the whole step
  std::vector<LayerRecord> layers;                    // the model's, then "loss"
  int64_t kept = 0;                                   // live activations at the end of forward
  int64_t activation_peak = 0, workspace_peak = 0;
  int64_t param_gradients = 0;  // left after backward
  int64_t peak = 0;             // everything together, over the step
  std::string peak_phase;       // the phase the peak fell in
  std::vector<Sample> timeline;
  std::vector<std::vector<float>> grads;  // f32 parameter gradients, for part 2's experiment
};

// Parameters are created in f32; for the f64 run they are replaced by f64
// copies, charged to the same layer.
void convert_parameters(nn::Module& model, DType dtype) {
  for (nn::Parameter* p : model.parameters()) {
    MemoryScope scope(MemTag::parameter, p->name.substr(0, p->name.rfind('.')));
    p->var.value() = p->var.value().to(dtype);
  }
}

// Builds the model, optimizer and a batch, then runs forward, backward and the
// update, sampling the tracker after every layer's forward and backward. The
// backward samples come from probes recorded on the tape itself: a closure
// recorded just before layer i's forward runs just after layer i's backward,
// since backward plays the tape newest first.
StepResult run_step(const StepOptions& o) {
  StepResult r;
  const Probe probe;
  auto model = nn::make_model(o.model, kImage, kClasses, 1);
  if (o.dtype != DType::f32) convert_parameters(*model, o.dtype);
  r.parameter_count = model->parameter_count();
  std::unique_ptr<nn::Optimizer> optimizer;
  if (o.optimizer != "none") optimizer = nn::make_optimizer(o.optimizer, model->parameters(), 1e-3);
  data::Dataset images = data::make_squares(o.batch, int(kClasses), 28, 5);  // (batch,1,28,28)
  if (o.dtype != DType::f32) images.inputs = images.inputs.to(o.dtype);
  r.parameters = probe.live(MemTag::parameter);
  r.optimizer = probe.live(MemTag::optimizer);
  r.inputs = probe.live(MemTag::other);
  r.timeline.push_back(probe.take("start"));
  const int64_t loss_value_bytes = int64_t(size_of(o.dtype));  // the loss Var we hold through backward

  ag::Var loss;
  {
    ag::Tape tape;
    ag::TapeScope recording(tape);
    auto mark_backward = [&](size_t index) {
      tape.record([&, index] {
        LayerRecord& l = r.layers[index];
        r.timeline.push_back(probe.take("bwd " + l.name));
        const int64_t row_after = l.row_before + (l.kind == Kind::loss ? loss_value_bytes : 0);
        l.freed = layer_bytes(l.name, MemTag::activation) == row_after &&
                  r.timeline.back().live[int(MemTag::activation)] == l.level_before + loss_value_bytes;
      });
    };
    auto begin_layer = [&](std::string name, Kind kind) {
      LayerRecord& l = r.layers.emplace_back();
      l.name = std::move(name);
      l.kind = kind;
      l.level_before = probe.live(MemTag::activation);
      l.row_before = layer_bytes(l.name, MemTag::activation);
      mark_backward(r.layers.size() - 1);
    };
    auto end_layer = [&](const Shape& output) {
      LayerRecord& l = r.layers.back();
      l.output = output;
      r.timeline.push_back(probe.take("fwd " + l.name));
      l.kept = r.timeline.back().live[int(MemTag::activation)] - l.level_before;
      l.expected = expected_keep(l.kind, output, o.dtype);
    };

    ag::Var h(images.inputs);
    std::vector<ag::Var> outputs;  // held only for the poison experiment
    for (const auto& layer : model->layers()) {
      begin_layer(layer->name(), kind_of(*layer));
      h = (*layer)(h);
      end_layer(h.shape());
      if (o.poison >= 0) outputs.push_back(h);
    }
    begin_layer("loss", Kind::loss);
    {
      MemoryScope scope(MemTag::activation, "loss");
      loss = ag::softmax_cross_entropy(h, images.labels);
    }
    end_layer({o.batch, kClasses});
    h = ag::Var();  // from here on only the tape holds the activations
    r.kept = r.timeline.back().live[int(MemTag::activation)];
    if (o.poison >= 0) {
      outputs[size_t(o.poison)].value().fill(std::nan(""));
      outputs.clear();
    }
    if (optimizer) optimizer->zero_grad();
    tape.backward(loss);
  }
  r.param_gradients = probe.live(MemTag::gradient) - loss_value_bytes;  // less the loss's seed 1
  if (optimizer) {
    optimizer->step();
    r.timeline.push_back(probe.take("optimizer step"));
  }
  for (size_t i = 1; i < r.timeline.size(); ++i) {  // the step, without the setup before "start"
    const Sample& s = r.timeline[i];
    r.activation_peak = std::max(r.activation_peak, s.peak[int(MemTag::activation)]);
    r.workspace_peak = std::max(r.workspace_peak, s.peak[int(MemTag::workspace)]);
    if (s.total_peak > r.peak) r.peak = s.total_peak, r.peak_phase = s.label;
  }
  // Whose output values a backward reads: the next layer's, looking through
  // Flatten (a view passes its input on).
  for (size_t i = 0; i + 1 < r.layers.size(); ++i) {
    size_t next = i + 1;
    while (r.layers[next].kind == Kind::flatten) ++next;
    r.layers[i].output_read = reads_input_values(r.layers[next].kind);
  }
  if (o.dtype == DType::f32)
    for (nn::Parameter* p : model->parameters()) {
      const Tensor& g = p->var.grad();
      r.grads.emplace_back(g.data<float>(), g.data<float>() + g.numel());
    }
  return r;
}

// ---- printing ------------------------------------------------------------------------

std::string fmt(int64_t bytes) { return format_bytes(bytes); }  // "1.50 MiB"

const char* verdict(bool ok) { return ok ? "ok" : "FAIL"; }

// A bar of `width` characters for one sample, `scale` bytes full: everything
// else (parameters, optimizer state, the batch) '.', activations '#',
// gradients '+', and a '|' where the phase's peak reached.
std::string bar(const Sample& s, int64_t scale, int width, bool show_peak) {
  auto cells = [&](int64_t bytes) {
    return size_t(std::max<long>(0, std::lround(double(bytes) / double(scale) * width)));
  };
  const int64_t act = s.live[int(MemTag::activation)], grad = s.live[int(MemTag::gradient)];
  std::string out(cells(s.total - act - grad), '.');
  out += std::string(cells(act), '#');
  out += std::string(cells(grad), '+');
  if (show_peak && cells(s.total_peak) > out.size())
    out += std::string(cells(s.total_peak) - out.size() - 1, ' ') + '|';
  return out;
}

// ---- 1. the timeline ----------------------------------------------------------------

bool timeline(const char* title, const StepResult& r) {
  std::printf("  %s, one Adam step; live bytes after each phase, and the most alive during it:\n", title);
  std::printf("  alive throughout: parameters %s, Adam state %s, input batch and labels %s\n",
              fmt(r.parameters).c_str(), fmt(r.optimizer).c_str(), fmt(r.inputs).c_str());
  std::printf("  %-15s %11s %10s %10s %10s %10s  %s\n", "after", "activations", "gradients", "workspace*", "all live",
              "peak", "all live, as a bar");
  for (size_t i = 0; i < r.timeline.size(); ++i) {
    const Sample& s = r.timeline[i];
    std::printf("  %-15s %11s %10s %10s %10s %10s  %s\n", s.label.c_str(),
                fmt(s.live[int(MemTag::activation)]).c_str(), fmt(s.live[int(MemTag::gradient)]).c_str(),
                i == 0 ? "-" : fmt(s.peak[int(MemTag::workspace)]).c_str(), fmt(s.total).c_str(),
                i == 0 ? "-" : fmt(s.total_peak).c_str(), bar(s, r.peak, 32, i > 0).c_str());
  }
  std::printf("  peak: the most alive at once during the phase; * workspace: the most its convolutions\n"
              "  (and the loss's per-row values) used at once, none of it kept for backward.\n"
              "  Bar: '.' parameters, optimizer state and batch,\n"
              "  '#' activations, '+' gradients, '|' the phase's peak; the step's peak fills it.\n");

  // The claims: activations peak at the end of forward; each layer's backward
  // frees exactly what its forward kept; one gradient per parameter remains.
  bool freed = true;
  for (const LayerRecord& l : r.layers) freed = freed && l.freed;
  const bool peak_ok = r.activation_peak == r.kept;
  const bool grads_ok = r.param_gradients == r.parameters;
  const int64_t end_forward = r.timeline[r.layers.size()].total;  // the sample after the loss's forward
  std::printf("  activations peak at the end of forward: %s alive after the loss, the most over the step %s: %s\n",
              fmt(r.kept).c_str(), fmt(r.activation_peak).c_str(), verdict(peak_ok));
  std::printf("  each layer's backward frees what its forward kept (the tracker's row for it back to its\n"
              "  value before that forward, all activations back to their level then): %s\n",
              verdict(freed));
  std::printf("  after backward, gradients = parameters (%s): %s\n", fmt(r.param_gradients).c_str(),
              verdict(grads_ok));
  std::printf("  the step's peak: %s, during '%s'; %s alive at the end of forward, %+.1f%%\n\n",
              fmt(r.peak).c_str(), r.peak_phase.c_str(), fmt(end_forward).c_str(),
              100.0 * double(r.peak - end_forward) / double(end_forward));
  return peak_ok && freed && grads_ok;
}

// ---- 2. what each layer keeps -----------------------------------------------------

bool layer_table(const char* title, const StepResult& r, int64_t batch) {
  std::printf("  %s, batch %lld: what each forward leaves alive (measured), its formula, what backward reads\n",
              title, static_cast<long long>(batch));
  std::printf("  %s %s %10s %9s %s %s %s\n", pad_right("layer", 8).c_str(), pad_right("output", 15).c_str(),
              "kept", "per image", pad_right("formula", 28).c_str(), pad_right("its backward reads", 27).c_str(),
              "output read?");
  bool ok = true;
  int64_t unread = 0;
  for (const LayerRecord& l : r.layers) {
    const bool match = l.kept == l.expected.bytes;
    ok = ok && match;
    const bool last = l.kind == Kind::loss;
    if (!last && !l.output_read) unread += l.expected.output_bytes;
    std::printf("  %s %s %10s %9s %s %s %s\n", pad_right(l.name, 8).c_str(), pad_right(l.output.str(), 15).c_str(),
                fmt(l.kept).c_str(), fmt(l.kept / batch).c_str(),
                pad_right(std::string(l.expected.formula) + (match ? "" : " FAIL"), 28).c_str(),
                pad_right(backward_reads(l.kind), 27).c_str(),
                last || l.kind == Kind::flatten ? "" : l.output_read ? "yes" : "no");
  }
  std::printf("  total kept %s (%s per image); every layer's measurement = its formula: %s\n", fmt(r.kept).c_str(),
              fmt(r.kept / batch).c_str(), verdict(ok));
  std::printf("  outputs kept although no backward reads their values: %s = %.0f%% of the kept bytes\n\n",
              fmt(unread).c_str(), 100.0 * double(unread) / double(r.kept));
  return ok;
}

bool same_bits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].size() != b[i].size() || std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0)
      return false;
  return true;
}

// The experiment behind the last column: fill one layer's output with NaN
// after the forward and before backward. If no backward reads it, every
// parameter gradient comes out identical, bit for bit.
bool poison_experiment(const char* title, const std::string& model, int64_t batch) {
  StepOptions o{model, batch};
  o.optimizer = "none";
  const StepResult clean = run_step(o);
  std::printf("  %s, batch %lld: each layer's output set to NaN between forward and backward:\n", title,
              static_cast<long long>(batch));
  std::string unchanged, changed;
  bool ok = true;
  for (size_t i = 0; i + 1 < clean.layers.size(); ++i) {
    const LayerRecord& l = clean.layers[i];
    if (l.kind == Kind::flatten) continue;  // a view: its bytes are the previous layer's
    o.poison = int(i);
    const bool same = same_bits(run_step(o).grads, clean.grads);
    ok = ok && same == !l.output_read;
    (same ? unchanged : changed) += " " + l.name + (same == !l.output_read ? "" : "(FAIL)");
  }
  std::printf("    gradients change:   %s\n    gradients identical:%s\n", changed.c_str(), unchanged.c_str());
  std::printf("  the outputs whose poisoning changes nothing are exactly those the code says no backward\n"
              "  reads: %s\n\n",
              verdict(ok));
  return ok;
}

// ---- 3. batch size ------------------------------------------------------------------

// Three significant figures in words: "1.02 million", "157 thousand".
std::string about(double n) {
  char buf[48];
  if (n >= 1e6) std::snprintf(buf, sizeof buf, "%.3g million", n / 1e6);
  else if (n >= 1e3) std::snprintf(buf, sizeof buf, "%.3g thousand", n / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

bool batch_sweep(const char* title, const std::string& model, const std::vector<int64_t>& batches) {
  std::printf("  %s, one Adam step per batch size:\n", title);
  std::printf("  %5s %11s %11s %11s %11s %11s %11s %11s  %s\n", "batch", "parameters", "param grads", "Adam state",
              "workspace", "batch data", "activations", "step peak", "peak during");
  std::vector<int64_t> kept;
  std::vector<StepResult> runs;
  for (int64_t b : batches) {
    runs.push_back(run_step({model, b}));
    const StepResult& r = runs.back();
    kept.push_back(r.kept);
    std::printf("  %5lld %11s %11s %11s %11s %11s %11s %11s  %s\n", static_cast<long long>(b),
                fmt(r.parameters).c_str(), fmt(r.param_gradients).c_str(), fmt(r.optimizer).c_str(),
                fmt(r.workspace_peak).c_str(), fmt(r.inputs).c_str(), fmt(r.kept).c_str(), fmt(r.peak).c_str(),
                r.peak_phase.c_str());
  }
  bool fixed = true;
  for (const StepResult& r : runs)
    fixed = fixed && r.parameters == runs[0].parameters && r.param_gradients == runs[0].param_gradients &&
            r.optimizer == runs[0].optimizer;
  // Every tensor the tape keeps has the batch as its first extent, except the
  // one-element loss value: activations = N × (bytes per image) + 4 B, exactly.
  const int64_t per_image = (kept.back() - kept.front()) / (batches.back() - batches.front());
  const int64_t constant = kept.front() - per_image * batches.front();
  bool linear = constant == int64_t(size_of(DType::f32));
  for (size_t i = 0; i < batches.size(); ++i) linear = linear && kept[i] == per_image * batches[i] + constant;
  std::printf("  parameters, their gradients and Adam's state do not change with the batch: %s\n", verdict(fixed));
  std::printf("  activations kept = N × %lld B + %lld B (the loss value), at every N: %s\n",
              static_cast<long long>(per_image), static_cast<long long>(constant), verdict(linear));
  // The peak is the largest of the phase peaks, and which phase holds it can
  // change with N. Each phase's peak grows linearly; from the two largest
  // batches, the one that grows fastest holds the peak at large N.
  const StepResult &lo = runs[runs.size() - 2], &hi = runs.back();
  const double dn = double(batches.back() - batches[batches.size() - 2]);
  size_t binding = 1;
  double slope = 0, fixed_bytes = 0;
  for (size_t i = 1; i < hi.timeline.size(); ++i) {  // the same phases in every run: one model
    const double a = double(hi.timeline[i].total_peak - lo.timeline[i].total_peak) / dn;
    if (a > slope) slope = a, binding = i, fixed_bytes = double(hi.timeline[i].total_peak) - a * double(batches.back());
  }
  std::printf("  the phase whose peak grows fastest (from batches %lld and %lld): '%s', N × %.0f B + %s\n",
              static_cast<long long>(batches[batches.size() - 2]), static_cast<long long>(batches.back()),
              hi.timeline[binding].label.c_str(), slope, fmt(int64_t(fixed_bytes)).c_str());
  // The largest batch whose step fits, computed from that line: tensors only
  // (no CUDA context, allocator slack or library workspace), in the memory
  // CUDA gives a program (src/device/datasheet.hpp: the datasheets' "GB" are GiB).
  namespace ds = device::datasheet;
  for (auto [gpu, bytes] : {std::pair{"H100", ds::h100::kMemoryBytes}, std::pair{"H200", ds::h200::kMemoryBytes}})
    std::printf("  computed: the largest batch an %s's %s fits: (%s − %s) / %.0f B ≈ %s images\n", gpu,
                fmt(int64_t(bytes)).c_str(), fmt(int64_t(bytes)).c_str(), fmt(int64_t(fixed_bytes)).c_str(), slope,
                about((bytes - fixed_bytes) / slope).c_str());
  std::printf("\n");
  return fixed && linear;
}

// ---- 4. optimizer state -----------------------------------------------------------

bool optimizer_state(const char* title, const std::string& model, int64_t batch) {
  std::printf("  %s, batch %lld:\n", title, static_cast<long long>(batch));
  std::printf("  %-22s %12s %12s %12s %14s\n", "optimizer", "parameters", "state", "state/params", "step peak");
  StepResult runs[3];
  const char* names[3] = {"none", "sgd", "adam"};
  const char* labels[3] = {"none (gradients only)", "SGD, momentum 0.9", "Adam"};
  for (int i = 0; i < 3; ++i) {
    StepOptions o{model, batch};
    o.optimizer = names[i];
    runs[i] = run_step(o);
    std::printf("  %-22s %12s %12s %12.2f %14s\n", labels[i], fmt(runs[i].parameters).c_str(),
                fmt(runs[i].optimizer).c_str(), double(runs[i].optimizer) / double(runs[i].parameters),
                fmt(runs[i].peak).c_str());
  }
  const int64_t p = runs[0].parameters;
  const bool slots = runs[0].optimizer == 0 && runs[1].optimizer == p && runs[2].optimizer == 2 * p;
  // The state lives through the whole step, so it adds to the peak one for one.
  const bool peak = runs[1].peak - runs[0].peak == p && runs[2].peak - runs[0].peak == 2 * p;
  std::printf("  SGD keeps one slot per parameter (velocity), Adam two (m, v): %s\n", verdict(slots));
  std::printf("  each adds exactly its state to the step's peak: %s\n\n", verdict(peak));
  return slots && peak;
}

// ---- 5. precision ---------------------------------------------------------------------

int64_t index_bytes(const StepResult& r) {
  int64_t n = 0;
  for (const LayerRecord& l : r.layers) n += l.expected.index_bytes;
  return n;
}

bool precision(const char* title, const std::string& model, int64_t batch) {
  StepOptions o{model, batch};
  const StepResult f32 = run_step(o);
  o.dtype = DType::f64;
  const StepResult f64 = run_step(o);
  const int64_t idx = index_bytes(f32);
  std::printf("  %s, batch %lld, one Adam step, measured:\n", title, static_cast<long long>(batch));
  std::printf("  %-30s %12s %12s %8s\n", "", "f32", "f64", "ratio");
  auto row = [](const char* what, int64_t a, int64_t b) {
    std::printf("  %-30s %12s %12s %8.3f\n", what, fmt(a).c_str(), fmt(b).c_str(), double(b) / double(a));
  };
  row("parameters", f32.parameters, f64.parameters);
  row("parameter gradients", f32.param_gradients, f64.param_gradients);
  row("Adam state", f32.optimizer, f64.optimizer);
  row("activations kept", f32.kept, f64.kept);
  std::printf("  %-30s %12s %12s\n", "  of which argmax (i32)", fmt(idx).c_str(), fmt(idx).c_str());
  row("step peak", f32.peak, f64.peak);
  const bool params_ok = f64.parameters == 2 * f32.parameters && f64.param_gradients == 2 * f32.param_gradients &&
                         f64.optimizer == 2 * f32.optimizer;
  const bool acts_ok = f64.kept == 2 * (f32.kept - idx) + idx;
  std::printf("  parameters, gradients, state: 2× in f64: %s; activations: 2 × floats + the same indices: %s\n",
              verdict(params_ok), verdict(acts_ok));

  // Narrower types, computed from the measured f32 element counts.
  const int64_t floats = (f32.kept - idx) / 4, n = f32.parameter_count;
  std::printf("  computed from those counts (%lld float values, %lld parameters), not measured:\n",
              static_cast<long long>(floats), static_cast<long long>(n));
  std::printf("  %-18s %12s %18s   %s\n", "storage", "B per value", "activations kept", "weights, gradients, state");
  std::printf("  %-18s %12d %18s   %s: 4 + 4 + 4+4 B per parameter\n", "f32, Adam", 4,
              fmt(floats * 4 + idx).c_str(), fmt(16 * n).c_str());
  std::printf("  %-18s %12d %18s   %s: 2 + 2 bf16, 4 f32 master, 4+4 f32 state\n", "bf16/fp16 mixed", 2,
              fmt(floats * 2 + idx).c_str(), fmt((2 + 2 + 4 + 8) * n).c_str());
  std::printf("  %-18s %12d %18s\n\n", "fp8 activations", 1, fmt(floats + idx).c_str());
  return params_ok && acts_ok;
}

// ---- 6. recomputation ---------------------------------------------------------------------

// Activation checkpointing, computed from the measured per-layer bytes: keep
// only each max-pool's output (the checkpoints) through the forward, and rerun
// a segment's forward from the checkpoint before it when backward reaches it.
// While segment s runs its backward, the checkpoints before it and all of
// segment s's activations are alive; the later segments are gone already.
void recomputation(const char* title, const StepResult& r, const std::string& model, int64_t batch) {
  auto net = nn::make_model(model, kImage, kClasses, 1);
  std::vector<double> flops;  // forward FLOPs of each layer
  Shape s{batch, 1, 28, 28};
  for (const auto& layer : net->layers()) {
    flops.push_back(layer->cost(s).flops);
    s = layer->output_shape(s);
  }
  std::printf("  %s, batch %lld, checkpoints at the max-pool outputs (computed from part 2's bytes):\n", title,
              static_cast<long long>(batch));
  std::printf("  %s %12s %14s %22s\n", pad_right("segment", 16).c_str(), "activations", "forward MFLOP",
              "alive in its backward");
  int64_t checkpoints = 0, worst = 0, segment = 0;
  double recomputed = 0, segment_flops = 0, forward = 0;
  std::string first;
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const LayerRecord& l = r.layers[i];
    if (first.empty()) first = l.name;
    segment += l.kept;
    if (i < flops.size()) segment_flops += flops[i], forward += flops[i];
    if (l.kind != Kind::max_pool && l.kind != Kind::loss) continue;
    const bool last = l.kind == Kind::loss;  // its activations are still there: not rerun
    worst = std::max(worst, checkpoints + segment);
    std::printf("  %s %12s %14.1f %22s%s\n", pad_right(first + "…" + l.name, 16).c_str(), fmt(segment).c_str(),
                segment_flops / 1e6, fmt(checkpoints + segment).c_str(), last ? "  (kept, not rerun)" : "");
    if (!last) {
      checkpoints += l.expected.output_bytes;  // the pool's output, not its argmax
      recomputed += segment_flops;
    }
    segment = 0, segment_flops = 0, first.clear();
  }
  std::printf("  activations alive at most: %s without recomputation, about %s with it\n", fmt(r.kept).c_str(),
              fmt(worst).c_str());
  std::printf("  price: rerun %.1f of the %.1f forward MFLOP, +%.0f%% on a step of about 3 forwards\n\n",
              recomputed / 1e6, forward / 1e6, 100.0 * recomputed / (3 * forward));
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<bool> args = warpnet::lesson::parse_quick(argc, argv);
  if (!args) return 2;
  const bool quick = *args;
  try {
    std::printf("Lesson 06 — Backprop and memory\n===============================\n\n");
    const int64_t batch = quick ? 16 : 64;
    const StepResult lenet = run_step({"lenet5", batch}), alexnet = run_step({"alexnet", batch});

    std::printf("1. The memory timeline of one training step\n\n");
    bool ok = timeline("LeNet-5", lenet);
    ok = timeline("mini-AlexNet", alexnet) && ok;

    std::printf("2. What each layer keeps for backward, and why\n\n");
    ok = layer_table("LeNet-5", lenet, batch) && ok;
    ok = layer_table("mini-AlexNet", alexnet, batch) && ok;
    ok = poison_experiment("LeNet-5", "lenet5", quick ? 4 : 8) && ok;
    ok = poison_experiment("mini-AlexNet", "alexnet", quick ? 4 : 8) && ok;

    std::printf("3. The batch size\n\n");
    const std::vector<int64_t> batches = quick ? std::vector<int64_t>{16, 32, 48}
                                               : std::vector<int64_t>{16, 32, 64, 128, 256};
    ok = batch_sweep("LeNet-5", "lenet5", batches) && ok;
    ok = batch_sweep("mini-AlexNet", "alexnet", batches) && ok;

    std::printf("4. Optimizer state\n\n");
    ok = optimizer_state("LeNet-5", "lenet5", batch) && ok;
    ok = optimizer_state("mini-AlexNet", "alexnet", batch) && ok;

    std::printf("5. Precision\n\n");
    ok = precision("LeNet-5", "lenet5", batch) && ok;
    ok = precision("mini-AlexNet", "alexnet", batch) && ok;

    std::printf("6. Recomputation (activation checkpointing)\n\n");
    recomputation("mini-AlexNet", alexnet, "alexnet", batch);

    std::printf("%s\n", ok ? "All checks passed." : "SOME CHECKS FAILED.");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lesson06: %s\n", e.what());
    return 1;
  }
}
