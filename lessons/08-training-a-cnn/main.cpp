// Lesson 08 — Training a CNN: AlexNet in miniature.
//
// In 2012 AlexNet (Krizhevsky, Sutskever and Hinton) trained a convolutional
// network of 60 million parameters on ImageNet with two GTX 580 GPUs. This
// chapter takes the same ideas to Fashion-MNIST's scale and prints:
//   1. AlexNet 2012 from the paper's layer sizes: parameters, neurons, FLOPs
//      per image, the compute of its training run and the memory of one step
//      (computed, checked against the figures the paper states)
//   2. warpnet's mini-AlexNet layer by layer: shapes, parameters (checked
//      against the formula), FLOPs per image (Module::cost), the bytes each
//      layer keeps at batch 64 (the memory tracker, checked against the rules
//      of chapter 06)
//   3. training it on Fashion-MNIST on this CPU: loss, accuracy, images/s
//   4. the same steps on warpnet's CUDA kernels, run by the emulator: losses
//      against the CPU's, the kernels launched, the emulator's images/s
//   5. CPU vs GPU: training rates that `warpnet bench train` recorded on a GPU
//      (bench/results/*.json), and nothing else
//   6. the GTX 580 beside an H200: public specifications, computed ratios
// The program exits 1 when a check fails.
//
//   build/bin/lesson08              # the whole chapter: 12,000 images × 3 epochs, about 65 s on 2 idle cores
//   build/bin/lesson08 --quick      # 2,000 images × 1 epoch, 5 to 25 s; what `ctest -R lesson08_training_a_cnn` runs
//   build/bin/lesson08 --markdown   # only part 2's table, as the README holds it
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "autograd/functions.hpp"
#include "core/memory.hpp"
#include "core/text.hpp"
#include "core/timer.hpp"
#include "cpu/ops.hpp"
#include "datasets/idx.hpp"
#include "datasets/synthetic.hpp"
#include "device/backend.hpp"
#include "device/datasheet.hpp"
#include "lessons/lesson_args.hpp"
#include "lessons/lesson_checks.hpp"
#include "lessons/lesson_data.hpp"
#include "lessons/lesson_machine.hpp"
#include "nn/models.hpp"
#include "nn/optim.hpp"
#include "nn/trainer.hpp"
#include "nn/training_records.hpp"

using namespace warpnet;

namespace {

using lesson::check;
using lesson::fixed;
using lesson::grouped;
using lesson::cpu_model;
using lesson::today_utc;
using lesson::load_average;

constexpr int64_t kClasses = 10;

std::string bytes(int64_t b) { return format_bytes(b); }  // "1.50 MiB"

// ==== 1. AlexNet, 2012, from the paper's layer sizes ====================================
//
// Krizhevsky, Sutskever, Hinton: "ImageNet Classification with Deep
// Convolutional Neural Networks", NIPS 2012, section 3.5 and figure 2. Each
// stage is a convolution or fully connected layer and what follows it. On two
// GPUs each layer's kernels are split in half; a convolution with groups = 2
// sees only the half of its input on its own GPU (5×5×48: 48 of 96 channels).

struct Stage {
  const char* name;
  bool conv;
  int64_t in, out, kernel, stride, pad, groups;  // fc: in → out
  bool relu, lrn, pool, dropout;
  const char* inputs;  // which GPU's outputs the stage reads
};

const Stage kAlexNet[] = {
    {"conv1 11×11/4", true, 3, 96, 11, 4, 0, 1, true, true, true, false, "the image"},
    {"conv2 5×5", true, 96, 256, 5, 1, 2, 2, true, true, true, false, "own GPU"},
    {"conv3 3×3", true, 256, 384, 3, 1, 1, 1, true, false, false, false, "both GPUs"},
    {"conv4 3×3", true, 384, 384, 3, 1, 1, 2, true, false, false, false, "own GPU"},
    {"conv5 3×3", true, 384, 256, 3, 1, 1, 2, true, false, true, false, "own GPU"},
    {"fc6", false, 9216, 4096, 0, 0, 0, 1, true, false, false, true, "both GPUs"},
    {"fc7", false, 4096, 4096, 0, 0, 0, 1, true, false, false, true, "both GPUs"},
    {"fc8", false, 4096, 1000, 0, 0, 0, 1, false, false, false, false, "both GPUs"},
};

// The paper's input is "224×224×3", but its 55×55 first layer needs 227:
// (227 − 11)/4 + 1 = 55 (chapter 05 says so too).
constexpr int64_t kAlexInput = 227;

struct AlexTotals {
  int64_t parameters = 0, neurons = 0, conv_parameters = 0;
  double flops = 0, conv_flops = 0;  // one forward pass of one image; of which the convolution stages
  int64_t kept_values = 0;           // per image, f32 or i32: 4 B each
};

// The totals of kAlexNet, and with `print` its table.
AlexTotals alexnet_2012(bool print) {
  if (print)
    std::printf("  %s %-10s %-12s %12s %12s %12s\n", pad_right("stage (and what follows it)", 44).c_str(), "inputs",
                "output", "parameters", "MFLOP/image", "kept/image");
  AlexTotals t;
  int64_t c = 3, h = kAlexInput;  // channels and side of the current feature map
  for (const Stage& s : kAlexNet) {
    int64_t params, n;  // n: the stage's output values (its "neurons")
    OpCost cost;
    int64_t kept = 0;  // values kept for backward, by chapter 06's rules
    std::string out_shape, what = s.name;
    if (s.conv) {
      const int64_t p = (h + 2 * s.pad - s.kernel) / s.stride + 1;
      const int64_t per_group = s.in / s.groups;
      params = s.out * per_group * s.kernel * s.kernel + s.out;
      cost = conv2d_cost(1, per_group, h, h, s.out, s.kernel, s.kernel, p, p);
      cost += elementwise_cost(s.out * p * p, 1);  // bias
      n = s.out * p * p;
      kept += n;  // the convolution's output
      h = p, c = s.out;
      if (s.groups > 1) what += cat(", groups ", s.groups);
    } else {
      params = s.in * s.out + s.out;
      cost = matmul_cost(1, s.out, s.in);
      cost += elementwise_cost(s.out, 1);
      n = s.out;
      kept += n;
    }
    if (s.relu) cost += elementwise_cost(n, 1), kept += n, what += " + ReLU";
    if (s.lrn) kept += n, what += ", LRN";  // its output; its FLOPs are left out
    if (s.pool) {
      const int64_t q = (h - 3) / 2 + 1;  // overlapping: 3×3 windows, stride 2
      cost += pool2d_cost(1, c, h, h, 9, q, q);
      kept += 2 * c * q * q;  // the pooled output and its argmax (i32)
      h = q;
      what += ", pool 3×3/2";
    }
    if (s.dropout) cost += elementwise_cost(n, 1), kept += 2 * n, what += ", dropout";  // output + mask
    if (!s.relu) kept += n, what += " + softmax";                                       // the probabilities
    out_shape = s.conv ? cat(c, "×", h, "×", h) : cat(n);
    t.parameters += params;
    t.neurons += n;
    t.flops += cost.flops;
    if (s.conv) t.conv_parameters += params, t.conv_flops += cost.flops;
    t.kept_values += kept;
    if (print)
      std::printf("  %s %-10s %s %12s %12.1f %12s\n", pad_right(what, 44).c_str(), s.inputs,
                  pad_right(out_shape, 12).c_str(), grouped(params).c_str(), cost.flops / 1e6,
                  bytes(kept * 4).c_str());
  }
  if (!print) return t;
  std::printf("  %s %-10s %-12s %12s %12.1f %12s\n", pad_right("total", 44).c_str(), "", "",
              grouped(t.parameters).c_str(), t.flops / 1e6, bytes(t.kept_values * 4).c_str());
  std::printf("  (input 3×227×227; MFLOP: a multiply-add counts 2, LRN's arithmetic left out;\n"
              "   kept: what each layer keeps for backward by chapter 06's rules, LRN its output only)\n");
  return t;
}

// The 2012 training run, computed: 90 epochs over 1.2 million images, a step
// about 3 forward passes.
double alexnet_training_flops(const AlexTotals& t) { return 90 * 1.2e6 * 3 * t.flops; }
// One step at the paper's batch of 128 by chapter 06's rules: weights, their
// gradients and SGD's momentum (f32), plus what the forward keeps.
int64_t alexnet_step_bytes(const AlexTotals& t) { return 3 * t.parameters * 4 + 128 * t.kept_values * 4; }

void part1() {
  std::printf("1. AlexNet, 2012, from the paper's layer sizes (computed)\n\n");
  const AlexTotals t = alexnet_2012(true);
  // The paper: "60 million parameters and 650,000 neurons". Its layer sizes
  // must give those, to the two figures it rounds to.
  std::printf("  parameters %s: the paper's \"60 million\", within 2%%: %s\n", grouped(t.parameters).c_str(),
              check(std::abs(double(t.parameters) / 60e6 - 1) < 0.02));
  std::printf("  neurons (outputs of the 8 layers) %s: the paper's \"650,000\", within 2%%: %s\n",
              grouped(t.neurons).c_str(), check(std::abs(double(t.neurons) / 650e3 - 1) < 0.02));
  std::printf("  the five convolution stages: %.1f%% of the parameters, %.1f%% of the FLOPs\n",
              100.0 * double(t.conv_parameters) / double(t.parameters), 100 * t.conv_flops / t.flops);

  // The training run: "roughly 90 cycles through the training set of 1.2
  // million images, which took five to six days on two NVIDIA GTX 580 3GB
  // GPUs". A training step is about 3 forwards (backward computes two
  // products of each forward's size, chapter 02). The GTX 580's peak is
  // NVIDIA's specification: 512 CUDA cores × 1544 MHz × 2 FLOPs (one FMA).
  const double train_flops = alexnet_training_flops(t), gtx580 = 512 * 1.544e9 * 2;
  std::printf("  the training run: 90 epochs × 1.2 million images × 3 × %.2f GFLOP ≈ %.1f × 10^17 FLOP\n",
              t.flops / 1e9, train_flops / 1e17);
  for (double days : {5.0, 6.0})
    std::printf("  in %.0f days: %.2f TFLOP/s sustained, %.0f%% of two GTX 580s' %.2f TFLOP/s peak\n", days,
                train_flops / (days * 86400) / 1e12, 100 * train_flops / (days * 86400) / (2 * gtx580),
                2 * gtx580 / 1e12);

  const int64_t weights = t.parameters * 4, acts = 128 * t.kept_values * 4;
  std::printf("  one step at batch 128 (f32): weights + gradients + momentum 3 × %s = %s;\n"
              "  activations kept 128 × %s = %s; together %s of a GTX 580's 3 GiB, before\n"
              "  backward's activation gradients, convolution workspace and the CUDA context\n\n",
              bytes(weights).c_str(), bytes(3 * weights).c_str(), bytes(t.kept_values * 4).c_str(),
              bytes(acts).c_str(), bytes(alexnet_step_bytes(t)).c_str());
}

// ==== 2. mini-AlexNet, layer by layer ====================================================

// The model as this page describes it (src/nn/models.cpp must build exactly
// this): 3×3 convolutions with padding 1, 2×2 max pools, 576 → 256 → 128 → 10.
struct Spec {
  const char* name;
  int64_t in, out, kernel;  // kernel 0: a fully connected layer
};
const Spec kMini[] = {{"conv1", 1, 32, 3},   {"conv2", 32, 64, 3},  {"conv3", 64, 128, 3},
                      {"conv4", 128, 128, 3}, {"conv5", 128, 64, 3}, {"fc1", 576, 256, 0},
                      {"fc2", 256, 128, 0},   {"fc3", 128, 10, 0}};

const Spec* spec_of(const std::string& name) {
  for (const Spec& s : kMini)
    if (name == s.name) return &s;
  return nullptr;
}

// What a layer's forward keeps alive for backward, from its output shape
// (chapter 06, part 2): the output; a max pool also its i32 argmax; a
// dropout also its mask; a flatten nothing (a view).
int64_t expected_kept(const nn::Module& m, const Shape& out) {
  const int64_t n = out.numel() * 4;
  if (dynamic_cast<const nn::Flatten*>(&m)) return 0;
  if (dynamic_cast<const nn::MaxPool2d*>(&m) || dynamic_cast<const nn::Dropout*>(&m)) return 2 * n;
  return n;
}

struct LayerRow {
  std::string name, what;
  Shape output;               // one image's
  int64_t parameters = 0;
  bool parameters_ok = true;  // = the formula, and the tracker holds 4 B each
  double flops = 0;           // forward, one image (Module::cost)
  bool flops_ok = true;       // conv and fc: = the formula
  int64_t kept = 0;           // bytes at batch 64, measured
  bool kept_ok = true;        // = chapter 06's rule
};

struct StepMemory {
  std::vector<LayerRow> layers;
  int64_t parameters = 0, parameter_bytes = 0, gradient_bytes = 0, adam_bytes = 0;
  int64_t kept = 0, workspace_peak = 0, peak = 0;
};

int64_t row_bytes(const std::string& layer, MemTag tag) {
  for (const MemRow& row : MemoryTracker::instance().layers())
    if (row.layer == layer) return row.by_tag[int(tag)].current;
  return 0;
}

// One Adam step of a fresh mini-AlexNet at `batch`, read from the memory
// tracker. The pixel values do not change a byte count: synthetic images of
// Fashion-MNIST's shape keep this part free of the data set.
StepMemory measure(int64_t batch) {
  MemoryTracker& tracker = MemoryTracker::instance();
  auto live = [&](MemTag t) { return tracker.tag(t).current; };
  StepMemory m;
  const int64_t params0 = live(MemTag::parameter), grads0 = live(MemTag::gradient), opt0 = live(MemTag::optimizer),
                acts0 = live(MemTag::activation), work0 = live(MemTag::workspace), total0 = tracker.total().current;
  std::map<std::string, int64_t> params_before;  // each layer's parameter bytes before the model exists
  for (const MemRow& row : tracker.layers()) params_before[row.layer] = row.by_tag[int(MemTag::parameter)].current;
  tracker.reset_peaks();
  auto model = nn::make_mini_alexnet(kClasses, 1);
  auto adam = nn::make_optimizer("adam", model->parameters(), 1e-3);
  const data::Dataset images = data::make_squares(batch, int(kClasses), 28, 5);  // (batch,1,28,28)
  m.parameters = model->parameter_count();
  m.parameter_bytes = live(MemTag::parameter) - params0;
  {
    ag::Tape tape;
    ag::TapeScope recording(tape);
    ag::Var h(images.inputs);
    Shape shape{1, 1, 28, 28};
    for (const auto& layer : model->layers()) {
      LayerRow r;
      r.name = layer->name();
      r.what = layer->describe();
      r.flops = layer->cost(shape).flops;
      shape = layer->output_shape(shape);
      r.output = Shape(std::vector<int64_t>(shape.begin() + 1, shape.end()));
      r.parameters = layer->parameter_count();
      const int64_t before = row_bytes(r.name, MemTag::activation);
      h = (*layer)(h);
      r.kept = row_bytes(r.name, MemTag::activation) - before;
      r.kept_ok = r.kept == expected_kept(*layer, h.shape());
      if (const Spec* s = spec_of(r.name)) {
        const int64_t taps = s->kernel ? s->kernel * s->kernel : 1, positions = r.output.numel() / s->out;
        r.parameters_ok = r.parameters == s->out * s->in * taps + s->out &&
                          row_bytes(r.name, MemTag::parameter) - params_before[r.name] == 4 * r.parameters;
        // 2·K·P·Q·C·R·S for a convolution (P·Q = 1 for a fc layer), plus the bias add.
        r.flops_ok = r.flops == 2.0 * s->out * positions * s->in * taps + double(s->out * positions);
      } else {
        r.parameters_ok = r.parameters == 0;
      }
      m.layers.push_back(std::move(r));
    }
    ag::Var loss;
    {
      MemoryScope scope(MemTag::activation, "loss");
      loss = ag::softmax_cross_entropy(h, images.labels);
    }
    h = ag::Var();
    m.kept = live(MemTag::activation) - acts0;
    adam->zero_grad();
    tape.backward(loss);
  }  // the loss and its seed gradient go here: what remains are the parameters' gradients
  m.gradient_bytes = live(MemTag::gradient) - grads0;
  adam->step();
  m.adam_bytes = live(MemTag::optimizer) - opt0;
  m.workspace_peak = tracker.tag(MemTag::workspace).peak - work0;
  m.peak = tracker.total().peak - total0;
  return m;
}

void layer_table(const StepMemory& m, bool markdown) {
  double flops = 0;
  int64_t layer_kept = 0;
  if (markdown)
    std::printf("| layer | what | output (one image) | parameters | MFLOP / image | kept for backward, batch 64 |\n"
                "|---|---|---|---:|---:|---:|\n");
  else
    std::printf("  %-8s %s %-12s %11s %12s %12s\n", "layer", pad_right("what", 28).c_str(), "output", "parameters",
                "MFLOP/image", "kept, b. 64");
  for (const LayerRow& r : m.layers) {
    flops += r.flops;
    layer_kept += r.kept;
    const std::string flags = std::string(r.parameters_ok ? "" : " params FAIL") + (r.flops_ok ? "" : " FLOPs FAIL") +
                              (r.kept_ok ? "" : " kept FAIL");
    if (markdown)
      std::printf("| %s | %s | %s | %s | %s | %s |\n", r.name.c_str(), r.what.c_str(), r.output.str().c_str(),
                  grouped(r.parameters).c_str(), fixed(r.flops / 1e6, 3).c_str(), bytes(r.kept).c_str());
    else
      std::printf("  %-8s %s %-12s %11s %12.3f %12s%s\n", r.name.c_str(), pad_right(r.what, 28).c_str(),
                  r.output.str().c_str(), grouped(r.parameters).c_str(), r.flops / 1e6, bytes(r.kept).c_str(),
                  flags.c_str());
  }
  const int64_t loss = m.kept - layer_kept;  // the softmax's probabilities and the loss value
  if (markdown) {
    std::printf("| loss | softmax + cross-entropy | (10) | 0 | | %s |\n", bytes(loss).c_str());
    std::printf("| **total** | | | **%s** | **%s** | **%s** |\n", grouped(m.parameters).c_str(),
                fixed(flops / 1e6, 2).c_str(), bytes(m.kept).c_str());
    std::printf("\nComputed and measured by `build/bin/lesson08 --markdown`: parameters and FLOPs from each layer, "
                "bytes from the memory tracker during one Adam step at batch 64; counts, so any machine prints the "
                "same table.\n");
    return;
  }
  std::printf("  %-8s %s %-12s %11s %12s %12s\n", "loss", pad_right("softmax + cross-entropy", 28).c_str(), "(10)", "0",
              "", bytes(loss).c_str());
  std::printf("  %-8s %s %-12s %11s %12.2f %12s\n", "total", pad_right("", 28).c_str(), "",
              grouped(m.parameters).c_str(), flops / 1e6, bytes(m.kept).c_str());
}

void part2(const StepMemory& m) {
  std::printf("2. warpnet's mini-AlexNet, layer by layer\n\n");
  layer_table(m, false);
  bool params = true, flops = true, kept = true;
  double total_flops = 0, conv_flops = 0;
  int64_t conv_params = 0, first_block = 0;  // the convolution layers'; conv1 to pool1's bytes
  for (const LayerRow& r : m.layers) {
    params = params && r.parameters_ok, flops = flops && r.flops_ok, kept = kept && r.kept_ok;
    total_flops += r.flops;
    if (r.name.rfind("conv", 0) == 0) conv_params += r.parameters, conv_flops += r.flops;
    if (r.name == "conv1" || r.name == "relu1" || r.name == "pool1") first_block += r.kept;
  }
  std::printf("  each layer's parameters = K·C·R·S + K (conv) or in·out + out (fc), as this page lists them: %s\n",
              check(params));
  std::printf("  each conv and fc layer's FLOPs (Module::cost) = 2·K·P·Q·C·R·S + the bias add: %s\n", check(flops));
  std::printf("  each layer keeps what chapter 06's rules say (output; pool + argmax; dropout + mask): %s\n",
              check(kept));
  std::printf("  the five convolutions: %.1f%% of the parameters, %.1f%% of the FLOPs; conv1, relu1 and pool1\n"
              "  keep %.0f%% of the activation bytes\n",
              100.0 * double(conv_params) / double(m.parameters), 100 * conv_flops / total_flops,
              100.0 * double(first_block) / double(m.kept));
  std::printf("  one Adam step at batch 64, measured by the tracker:\n");
  std::printf("    parameters %s = 4 B × %s: %s\n", bytes(m.parameter_bytes).c_str(), grouped(m.parameters).c_str(),
              check(m.parameter_bytes == 4 * m.parameters));
  std::printf("    gradients after backward %s = the parameters: %s\n", bytes(m.gradient_bytes).c_str(),
              check(m.gradient_bytes == m.parameter_bytes));
  std::printf("    Adam's state %s = 2 × the parameters: %s\n", bytes(m.adam_bytes).c_str(),
              check(m.adam_bytes == 2 * m.parameter_bytes));
  std::printf("    activations kept at the end of forward %s (%s per image)\n", bytes(m.kept).c_str(),
              bytes(m.kept / 64).c_str());
  std::printf("    workspace at most %s, the whole step at most %s (%d threads: the convolutions'\n"
              "    workspace depends on the thread count, chapter 06)\n",
              bytes(m.workspace_peak).c_str(), bytes(m.peak).c_str(), cpu::num_threads());
  const AlexTotals a = alexnet_2012(false);
  std::printf("  against AlexNet 2012 (part 1): %.0f× fewer parameters, %.0f× fewer FLOPs per image,\n"
              "  %.0f× fewer input values (28×28 grey against 227×227×3)\n\n",
              double(a.parameters) / double(m.parameters), a.flops / total_flops,
              double(227 * 227 * 3) / double(28 * 28));
}

// ==== 3. training on this CPU ==============================================================

struct Splits {
  data::Dataset train, test;
  bool fashion = false;
  std::string note;
};

// The first `n_train` training and `n_test` test images of Fashion-MNIST,
// standardized with the training images' mean and spread (as `warpnet
// train` does); the squares set, with a note, when the files are missing.
Splits load(int64_t n_train, int64_t n_test) {
  lesson::LessonData d = lesson::load_fashion_mnist_or_squares(n_train, n_test, int(kClasses));
  Splits s{std::move(d.train), std::move(d.test), d.fashion(), ""};
  s.note = s.fashion ? cat("Fashion-MNIST from ", d.dir)
                     : cat("NOTE: Fashion-MNIST could not be read (", d.why_synthetic,
                           ");\n  this run trains on data::make_squares instead — 28×28 images whose class is the "
                           "position of a bright square,\n  far easier than clothes: its accuracies say nothing about "
                           "Fashion-MNIST");
  return s;
}

nn::TrainOptions options(int epochs, int64_t batch) {
  nn::TrainOptions o;
  o.model = "alexnet";
  o.epochs = epochs;
  o.batch_size = batch;
  o.optimizer = "adam";
  o.lr = 1e-3;
  o.seed = 1;
  return o;
}

// Test accuracy per class, and the most frequent confusion, by a forward pass
// over `test` in eval mode; returns the overall accuracy it counted.
double per_class(nn::Sequential& model, const data::Dataset& test) {
  const int classes = test.num_classes;
  std::vector<int64_t> confusion(size_t(classes * classes), 0);  // [truth][prediction]
  {
    ag::NoGradScope no_grad;
    model.set_training(false);
    data::Batches batches(test, 256, false, 0);
    data::Batch b;
    while (batches.next(b)) {
      const Tensor logits = model(ag::Var(b.inputs)).value();  // (B,classes)
      for (int64_t i = 0; i < logits.dim(0); ++i) {
        const float* row = logits.data<float>() + i * classes;
        const int64_t guess = std::max_element(row, row + classes) - row;
        ++confusion[size_t(b.labels.data<int32_t>()[i] * classes + guess)];
      }
    }
    model.set_training(true);
  }
  auto name = [&](int c) { return size_t(c) < test.class_names.size() ? test.class_names[size_t(c)] : cat("class ", c); };
  int64_t correct = 0, worst = -1;
  int worst_truth = 0, worst_guess = 0;
  std::string line = "  test accuracy by class:";
  for (int t = 0; t < classes; ++t) {
    int64_t n = 0;
    for (int g = 0; g < classes; ++g) {
      const int64_t k = confusion[size_t(t * classes + g)];
      n += k;
      if (g != t && k > worst) worst = k, worst_truth = t, worst_guess = g;
    }
    const int64_t hit = confusion[size_t(t * classes + t)];
    correct += hit;
    const std::string item = cat(" ", name(t), " ", n ? fixed(100.0 * double(hit) / double(n), 0) : "-", "%,");
    if (line.size() + item.size() > 100) std::printf("%s\n", line.c_str()), line = "   ";
    line += item;
  }
  line.pop_back();
  std::printf("%s\n", line.c_str());
  std::printf("  most frequent mistake: %s taken for %s, %lld times\n", name(worst_truth).c_str(),
              name(worst_guess).c_str(), static_cast<long long>(worst));
  return double(correct) / double(test.size());
}

// Returns the measured training rate of the last epoch (images/s).
double part3(const Splits& data, int epochs, double forward_flops) {
  std::printf("3. Training mini-AlexNet on this CPU\n\n");
  std::printf("  %s\n", data.note.c_str());
  std::printf("  %lld training images, %lld test images; batch 64, Adam lr 0.001, seed 1, %d epoch%s\n",
              static_cast<long long>(data.train.size()), static_cast<long long>(data.test.size()), epochs,
              epochs == 1 ? "" : "s");
  std::printf("  machine: %s, %u hardware threads, %d used; %s; load average %s when training began\n"
              "  (load: the 1-minute load average after each epoch; above %u, other jobs shared the cores)\n",
              cpu_model().c_str(), std::thread::hardware_concurrency(), cpu::num_threads(), today_utc().c_str(),
              load_average().c_str(), std::thread::hardware_concurrency());
  nn::Trainer trainer(options(epochs, 64), data.train, data.test);
  const nn::EvalResult before = nn::evaluate(trainer.model(), data.test, 64);
  std::printf("  %-7s %10s %10s %10s %10s %9s %9s %10s %6s\n", "epoch", "train loss", "train acc", "test loss",
              "test acc", "seconds", "images/s", "GFLOP/s*", "load");
  std::printf("  %-7s %10s %10s %10.4f %9.2f%%\n", "before", "", "", before.loss, 100 * before.accuracy);
  std::fflush(stdout);
  // A training step is about 3 forward passes (chapter 02: a matmul's or a
  // convolution's backward computes two products of the forward's size).
  const double step_flops = 3 * forward_flops;
  const std::vector<nn::EpochStats> epochs_run = trainer.run({}, [&](const nn::EpochStats& e) {
    std::printf("  %-7d %10.4f %9.2f%% %10.4f %9.2f%% %9.1f %9.0f %10.1f %6s\n", e.epoch, e.train_loss,
                100 * e.train_accuracy, e.test_loss, 100 * e.test_accuracy, e.seconds, e.images_per_second,
                e.images_per_second * step_flops / 1e9, load_average().c_str());
    std::fflush(stdout);
  });
  const nn::EpochStats& last = epochs_run.back();
  const double counted = per_class(trainer.model(), data.test);
  std::printf("  the classes' tally gives the trainer's test accuracy, %.2f%%: %s\n", 100 * counted,
              check(std::abs(counted - last.test_accuracy) < 1e-12));
  const double chance = 1.0 / double(kClasses);
  // With 10 balanced classes a guesser scores 10%; over 500 test images its
  // score has a standard deviation of 1.3 points, so 20% is far beyond luck.
  std::printf("  test accuracy %.1f%% after training, above twice chance (%.0f%%) and above the untrained %.1f%%: %s\n",
              100 * last.test_accuracy, 200 * chance, 100 * before.accuracy,
              check(last.test_accuracy > 2 * chance && last.test_accuracy > before.accuracy));
  std::printf("  the last epoch's training loss %.4f is below ln 10 = %.4f (a uniform guess): %s\n", last.train_loss,
              std::log(double(kClasses)), check(last.train_loss < std::log(double(kClasses))));
  const double gflops = last.images_per_second * step_flops / 1e9;
  std::printf("  * computed: images/s × 3 × %.1f MFLOP (a step ≈ 3 forwards); from the last rate, an epoch of\n"
              "  Fashion-MNIST's 60,000 training images would take %.0f s on this machine, and AlexNet's\n"
              "  %.1f × 10^17 FLOP (part 1) at the same %.0f GFLOP/s %.0f days, against 5 to 6 on two GTX 580s\n"
              "  (if its larger layers ran as fast here, which nothing here measures)\n\n",
              forward_flops / 1e6, 60000 / last.images_per_second, alexnet_training_flops(alexnet_2012(false)) / 1e17,
              gflops, alexnet_training_flops(alexnet_2012(false)) / (gflops * 1e9) / 86400);
  return last.images_per_second;
}

// ==== 4. the same network on warpnet's kernels, on the emulator ============================

struct Run {
  std::vector<double> losses;  // per step
  nn::EpochStats epoch{};
  double rate = 0;  // images/s from the end of the first step to the end of the last
  Tensor logits;  // of the first batch after training, in eval mode, on the host
};

// One epoch over `train` (whole batches only) on `device`: the loss of every
// step, recovered from the trainer's running mean.
Run train_steps(const data::Dataset& train, int64_t batch, Device device) {
  nn::TrainOptions o = options(1, batch);
  o.device = device;
  const data::Dataset none;  // no test set: no evaluation
  nn::Trainer trainer(o, train, none);
  std::vector<double> means, ends;  // running mean loss, seconds at the end of each step
  Run run;
  Timer timer;
  run.epoch = trainer.run([&](const nn::StepProgress& s) {
                       ends.push_back(timer.seconds());
                       means.push_back(s.loss);
                     }).at(0);
  // The first step pays for warm-up (allocations, the emulator's fiber
  // stacks): the rate counts the steps after it.
  if (ends.size() > 1) run.rate = double(batch) * double(ends.size() - 1) / (ends.back() - ends.front());
  // A step's loss is a float; the difference of two running means carries
  // their double rounding (about 1e-16) besides, which rounding to float removes.
  for (size_t i = 0; i < means.size(); ++i)
    run.losses.push_back(float(double(i + 1) * means[i] - (i ? double(i) * means[i - 1] : 0.0)));
  ag::NoGradScope no_grad;
  trainer.model().set_training(false);  // dropout off: the same function on both devices
  const Tensor x = data::head(train, batch).inputs.to(device);
  run.logits = trainer.model()(ag::Var(x)).value().to(Device::cpu);
  return run;
}

void part4(const data::Dataset& train, int64_t steps, int64_t batch) {
  std::printf("4. The same steps on warpnet's CUDA kernels, run by the emulator\n\n");
  const data::Dataset first = data::head(train, steps * batch);
  std::printf("  %lld steps of batch %lld (the first %lld training images), same seed, same dropout masks:\n",
              static_cast<long long>(steps), static_cast<long long>(batch), static_cast<long long>(steps * batch));
  const Run cpu = train_steps(first, batch, Device::cpu);
  const Run emu = train_steps(first, batch, Device::emu);
  std::printf("  %-5s %16s %16s %14s\n", "step", "loss, CPU (Eigen)", "emu (kernels)", "relative diff");
  double worst = 0;
  bool same_count = cpu.losses.size() == emu.losses.size();
  for (size_t i = 0; same_count && i < cpu.losses.size(); ++i) {
    const double rel = std::abs(emu.losses[i] - cpu.losses[i]) / std::abs(cpu.losses[i]);
    worst = std::max(worst, rel);
    std::printf("  %-5zu %16.9f %16.9f %14.1e\n", i + 1, cpu.losses[i], emu.losses[i], rel);
  }
  // Both compute in fp32 and differ only in the order of their sums: about
  // 1e-6 relative. 1e-4 leaves room for a few steps of that drift; a wrong
  // gradient moves the loss by more than that after one step.
  std::printf("  largest relative difference of the losses %.1e, within 1e-4: %s\n", worst,
              check(same_count && worst < 1e-4));
  // The loss is a float: near 2.3 the next float is 2.4e-7 away, 1e-7
  // relative, so smaller differences do not show in it. The logits do.
  double largest = 0, diff = 0;
  for (int64_t i = 0; i < cpu.logits.numel(); ++i) {
    largest = std::max(largest, double(std::abs(cpu.logits.data<float>()[i])));
    diff = std::max(diff, double(std::abs(cpu.logits.data<float>()[i] - emu.logits.data<float>()[i])));
  }
  const float at = float(cpu.losses.back());
  std::printf("  (a float loss near %.2f resolves %.1e relative; the logits of the trained networks on the\n"
              "  first %lld images differ by up to %.1e, %.1e of the largest logit: the sums are not the same)\n",
              at, (std::nextafter(at, 10.f) - at) / at, static_cast<long long>(batch), diff, diff / largest);
  std::printf("  the trained networks' logits agree within 1e-4 of the largest: %s\n", check(diff < 1e-4 * largest));
  std::printf("  training accuracy over the steps: CPU %.2f%%, emu %.2f%%\n", 100 * cpu.epoch.train_accuracy,
              100 * emu.epoch.train_accuracy);

  const std::vector<std::string> ids = device::kernels_launched();
  std::printf("  kernels the emulator launched (device::kernels_launched_with_candidates(), %zu):\n", ids.size());
  std::string line;
  for (const std::string& id : device::kernels_launched_with_candidates()) {
    if (line.size() + id.size() > 96) std::printf("   %s\n", line.c_str()), line.clear();
    line += " " + id;
  }
  if (!line.empty()) std::printf("   %s\n", line.c_str());
  // Every op of a mini-AlexNet training step, forward, backward and update.
  // Each ReLU comes after a layer with a bias, so the device runs both in one
  // kernel forward (bias_relu) and one backward (bias_relu_backward:
  // TrainOptions::fold_bias_relu); fc3's bias alone is bias_add.
  const char* needed[] = {"conv2d",     "conv2d_dgrad",          "conv2d_wgrad",
                          "bias_add",   "bias_add_backward",     "matmul",
                          "bias_relu",  "bias_relu_backward",    "max_pool2d",
                          "max_pool2d_backward",                 "dropout",
                          "softmax_cross_entropy",               "softmax_cross_entropy_backward",
                          "adam"};
  std::string missing;
  for (const char* op : needed)
    if (std::none_of(ids.begin(), ids.end(), [&](const std::string& id) { return id.rfind(std::string(op) + "/", 0) == 0; }))
      missing += cat(" ", op);
  std::printf("  every op of the step ran as a kernel (conv forward, dgrad, wgrad, bias, bias + ReLU in one\n"
              "  and its backward in one, matmul, pool, dropout, softmax + cross-entropy, Adam)%s: %s\n",
              missing.empty() ? "" : cat(", missing:", missing).c_str(), check(missing.empty()));
  std::printf("  speed over the steps after the first, batch %lld: Eigen %.0f images/s on this CPU, the emulator\n"
              "  %.1f images/s, %.0f× slower. The emulator runs every GPU thread as a fiber on this same CPU:\n"
              "  an emulator figure, not a GPU one.\n\n",
              static_cast<long long>(batch), cpu.rate, emu.rate, cpu.rate / emu.rate);
}

// ==== 5. CPU vs GPU, from recorded runs only ================================================

void part5(double cpu_rate) {
  std::printf("5. CPU vs GPU: training rates recorded on a GPU\n\n");
  const nn::RecordedTrainings recorded =
      nn::recorded_trainings(std::filesystem::path(WARPNET_SOURCE_DIR) / "bench" / "results");
  const bool any = !recorded.entries.empty();
  const int without_gpu = recorded.cpu_only;
  if (any)
    std::printf("  %-40s %-20s %-10s %-8s %6s %12s %12s %9s\n", "record", "GPU", "date", "model", "batch",
                "CPU img/s", "GPU img/s", "GPU/CPU");
  bool consistent = true;
  for (const nn::RecordedTraining& r : recorded.entries) {
    consistent = consistent && std::abs(r.speedup / (r.gpu_images_per_second / r.cpu_images_per_second) - 1) < 1e-9;
    std::printf("  %-40s %-20s %-10s %-8s %6lld %12.0f %12.0f %8.1f×\n", r.file.c_str(), r.gpu.c_str(),
                r.date.substr(0, 10).c_str(), r.model.c_str(), static_cast<long long>(r.batch_size),
                r.cpu_images_per_second, r.gpu_images_per_second, r.speedup);
    std::printf("  %-40s CPU of that machine: %s, %d threads\n", "", r.cpu.c_str(), r.cpu_threads);
  }
  if (any) {
    std::printf("  each speed-up is the record's own, CPU and GPU measured in one run on one machine;\n"
                "  it equals GPU img/s ÷ CPU img/s: %s\n",
                check(consistent));
  } else {
    std::printf("  No GPU training record yet: no bench/results/*.json holds a {\"op\": \"train\"} entry with a GPU rate%s.\n"
                "  So this chapter states no GPU figure and no speed-up. To make one, on a machine with an NVIDIA GPU:\n"
                "    warpnet bench train --model alexnet --json bench/results/train-<gpu>-<date>.json\n"
                "  (or TRAIN_ARGS=\"--model alexnet --threads 2\" scripts/gpu-check.sh on a lent GPU), commit the record,\n"
                "  and this part prints the CPU and GPU rates measured in that one run.\n",
                without_gpu ? cat(" (", without_gpu, " train entr", without_gpu == 1 ? "y has" : "ies have",
                                  " a CPU rate only)").c_str()
                            : "");
  }
  std::printf("  For scale, this run's CPU: %.0f images/s (part 3); not a ratio to anything above, which would\n"
              "  compare two machines and two runs.\n\n",
              cpu_rate);
}

// ==== 6. What changed since 2012 =========================================================

// Public specifications, computed ratios. GTX 580 (Fermi, 2010): NVIDIA's
// product specifications, 512 CUDA cores at 1544 MHz, 192.4 GB/s, 3 GB on
// the boards the paper used. H200 (Hopper, SXM): NVIDIA's datasheet peaks,
// as chapters 02 and 07 and `warpnet bench` use them (67 TFLOP/s FP32 = 132
// SMs × 1.98 GHz × 256; src/device/datasheet.hpp), and its memory as CUDA
// reported it on 2026-11-30, 139.80 GiB of the datasheet's "141 GB" (binary
// gigabytes, as the GTX 580's 3 GB).
void part6() {
  std::printf("6. What changed since 2012 (public specifications; ratios computed)\n\n");
  struct Row {
    const char* what;
    double gtx580, h200;
    const char* unit;
  };
  const double gtx580_fp32 = 512 * 1.544e9 * 2 / 1e12;  // TFLOP/s: one FMA per core per clock
  namespace h200 = device::datasheet::h200;
  const Row rows[] = {{"FP32, TFLOP/s", gtx580_fp32, h200::kFp32Flops / 1e12, ""},
                      {"16-bit matrix products, TFLOP/s", gtx580_fp32, h200::kBf16Flops / 1e12,
                       " (H200: BF16 on tensor cores, dense)"},
                      {"memory bandwidth, GB/s", 192.4, h200::kMemoryBytesPerSecond / 1e9, ""},
                      {"memory, GiB", 3, h200::kMemoryBytes / double(1 << 30), ""}};
  std::printf("  %-34s %10s %10s %8s\n", "", "GTX 580", "H200 SXM", "ratio");
  for (const Row& r : rows)
    std::printf("  %-34s %10.4g %10.4g %7.0f×%s\n", r.what, r.gtx580, r.h200, r.h200 / r.gtx580, r.unit);
  std::printf("  (the GTX 580 has no tensor cores: its 16-bit row is its FP32 peak)\n");
  const double step = double(alexnet_step_bytes(alexnet_2012(false)));
  std::printf("  AlexNet's step of part 1, %s, is %.0f%% of a GTX 580's 3 GiB and %.1f%% of an H200's 139.8 GiB\n\n",
              bytes(int64_t(step)).c_str(), 100 * step / (3.0 * (1 << 30)), 100 * step / h200::kMemoryBytes);
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<lesson::Mode> mode = lesson::parse_mode(argc, argv, "part 2's table only");
  if (!mode) return 2;
  const bool markdown = mode->markdown, quick = mode->quick;
  try {
    if (markdown) {
      const StepMemory m = measure(64);
      layer_table(m, true);
      return 0;
    }
    std::printf("Lesson 08 — Training a CNN: AlexNet in miniature%s\n"
                "================================================\n\n",
                quick ? " (--quick)" : "");
    part1();
    const StepMemory m = measure(64);
    part2(m);
    double forward = 0;
    for (const LayerRow& r : m.layers) forward += r.flops;
    const Splits data = quick ? load(2000, 500) : load(12000, 10000);
    const double rate = part3(data, quick ? 1 : 3, forward);
    if (quick)
      part4(data.train, 3, 16);
    else
      part4(data.train, 4, 32);
    part5(rate);
    part6();
    return lesson::finish_checks();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lesson08: %s\n", e.what());
    return 1;
  }
}
