// Lesson 02 — FLOPs, bytes and memory.
//
// 1. FLOP counts of matmul (2·M·N·K) and convolution (2·N·K·P·Q·C·R·S),
//    and a check that a convolution counts as its im2col GEMM.
// 2. Bytes moved and arithmetic intensity: a memory-bound ReLU, a
//    memory-bound matrix-vector product and a compute-bound matmul, timed on
//    this CPU with warpnet's ops, set against the H200's roof.
// 3. Where a training step's memory goes: parameters, activations, gradients
//    and Adam's state for LeNet-5 and mini-AlexNet at batch 64 and 256, as
//    the memory tracker measures them. The program fails when the measured
//    bytes disagree with the formulas (parameters = 4 B × count, gradients =
//    parameters, Adam = 2× parameters) or activations do not grow with the batch.
//
// Run: build/bin/lesson02            (--quick: smaller sizes, for the test)
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "autograd/functions.hpp"
#include "core/cost.hpp"
#include "core/text.hpp"
#include "core/timer.hpp"
#include "datasets/synthetic.hpp"
#include "device/datasheet.hpp"
#include "nn/models.hpp"
#include "nn/optim.hpp"
#include "nn/summary.hpp"
#include "lessons/lesson_args.hpp"

using namespace warpnet;

namespace {

// The H200's roof (its datasheet): dense peaks and HBM3e bandwidth.
constexpr double kH200Fp32 = device::datasheet::h200::kFp32Flops, kH200Bf16 = device::datasheet::h200::kBf16Flops,
                 kH200Bandwidth = device::datasheet::h200::kMemoryBytesPerSecond;

// ---- 1. counting FLOPs --------------------------------------------------------

// Labels hold multi-byte UTF-8 characters (→, ×, ³), so columns are padded
// with pad_right, which counts what the terminal shows; printf's %-20s counts bytes.
void print_cost(const char* what, const OpCost& c) {
  std::printf("  %s %9.1f MFLOP %9.2f MB %8.1f FLOP/B\n", pad_right(what, 48).c_str(), c.flops / 1e6, c.bytes() / 1e6,
              c.intensity());
}

// A convolution layer's shapes: x (n,c,h,w) * w (k,c,r,s) → y (n,k,p,q).
struct ConvShape {
  const char* label;
  int64_t n, c, h, w, k, r, s, p, q;
};

// Prints the FLOP counts; returns false if a convolution's count differs from
// that of the GEMM im2col turns it into (two formulas of cost.hpp that must agree).
bool count_flops() {
  std::printf("1. Counting FLOPs (a multiply and an add count as two)\n");
  std::printf("  matmul C(M,N) = A(M,K)·B(K,N): M·N outputs, each a K-long dot product → 2·M·N·K\n");
  print_cost("M=N=K=1024", matmul_cost(1024, 1024, 1024));
  print_cost("M=N=K=4096", matmul_cost(4096, 4096, 4096));
  print_cost("M=1, N=K=4096 (a matrix-vector product)", matmul_cost(1, 4096, 4096));
  std::printf(
      "  conv y(N,K,P,Q) from x(N,C,H,W), w(K,C,R,S): N·K·P·Q outputs, each a C·R·S dot product\n"
      "  → 2·N·K·P·Q·C·R·S, the same count as the GEMM (K)×(C·R·S)×(N·P·Q) that im2col turns it into\n");
  const ConvShape convs[] = {{"LeNet-5 conv1, batch 64: 1→6, 5×5, 28×28", 64, 1, 28, 28, 6, 5, 5, 28, 28},
                             {"LeNet-5 conv2, batch 64: 6→16, 5×5, 10×10", 64, 6, 14, 14, 16, 5, 5, 10, 10},
                             {"mini-AlexNet conv4, batch 64: 128→128, 3×3, 7×7", 64, 128, 7, 7, 128, 3, 3, 7, 7}};
  bool ok = true;
  for (const ConvShape& v : convs) {
    const OpCost conv = conv2d_cost(v.n, v.c, v.h, v.w, v.k, v.r, v.s, v.p, v.q);
    print_cost(v.label, conv);
    ok = ok && conv.flops == matmul_cost(v.k, v.n * v.p * v.q, v.c * v.r * v.s).flops;
  }
  std::printf("  (MB = the bytes each input is read and each output written once: the least an op can move)\n");
  std::printf("  check: each convolution's count equals its im2col GEMM's: %s\n\n", ok ? "ok" : "FAIL");
  return ok;
}

// ---- 2. bytes, intensity and the roofline -----------------------------------------

template <class Fn>
double best_seconds(int reps, Fn&& fn) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    Timer timer;
    fn();
    best = std::min(best, timer.seconds());
  }
  return best;
}

struct Measured {
  std::string name;
  OpCost cost;
  double seconds;
};

Tensor random_tensor(const Shape& shape, Rng& rng) {
  Tensor t = Tensor::empty(shape);
  fill_uniform(t, rng, -1, 1);
  return t;
}

// Three warm-up calls, then the best of `reps`. Warm-up lets the C library
// settle on reusing one block for the op's output (see main); the best run is
// the one least disturbed by other work on the machine.
template <class Fn>
double time_op(int reps, Fn&& fn) {
  for (int i = 0; i < 3; ++i) fn();
  return best_seconds(reps, fn);
}

// ReLU's arrays exceed the caches, so it streams from main memory; the
// matrix-vector product reads a matrix the caches hold at best in part; the
// matmul's 12 MiB of operands are reused from cache many times over.
std::vector<Measured> measure_ops(bool quick, int reps) {
  Rng rng(2);
  std::vector<Measured> rows;
  const int64_t n = int64_t(1) << (quick ? 24 : 26);
  {
    Tensor x = random_tensor({n}, rng);  // (n)
    rows.push_back({cat("ReLU, ", n >> 20, "M floats"), elementwise_cost(n, 1), time_op(reps, [&] { cpu::relu(x); })});
  }
  const int64_t k = quick ? 2048 : 4096;
  {
    Tensor w = random_tensor({k, k}, rng), v = random_tensor({k, 1}, rng);  // (K,K)·(K,1)
    rows.push_back({cat("matrix·vector ", k, "×", k), matmul_cost(k, 1, k), time_op(reps, [&] { cpu::matmul(w, v); })});
  }
  const int64_t m = 1024;
  {
    Tensor a = random_tensor({m, m}, rng), b = random_tensor({m, m}, rng);  // (M,M)·(M,M)
    rows.push_back({cat("matmul ", m, "³"), matmul_cost(m, m, m), time_op(reps, [&] { cpu::matmul(a, b); })});
  }
  return rows;
}

void roofline(bool quick) {
  std::printf("2. Bytes, arithmetic intensity and the roofline\n");
  const int reps = quick ? 5 : 10;
  std::printf("  Timed on this CPU with warpnet's ops (%d threads, best of %d after 3 warm-up calls):\n",
              cpu::num_threads(), reps);
  const std::vector<Measured> rows = measure_ops(quick, reps);
  std::printf("  %s %10s %10s %8s %10s %10s %9s\n", pad_right("op", 24).c_str(), "MFLOP", "MB moved", "FLOP/B",
              "time ms", "GFLOP/s", "GB/s");
  for (const Measured& r : rows)
    std::printf("  %s %10.1f %10.1f %8.3f %10.3f %10.1f %9.1f\n", pad_right(r.name, 24).c_str(), r.cost.flops / 1e6,
                r.cost.bytes() / 1e6, r.cost.intensity(), r.seconds * 1e3, r.cost.flops / r.seconds / 1e9,
                r.cost.bytes() / r.seconds / 1e9);
  // The ridge: the intensity at which this machine's arithmetic and memory
  // would take equally long. Below it an op waits for memory.
  const Measured &dram = rows.front(), &gemm = rows.back();
  const double cpu_flops = gemm.cost.flops / gemm.seconds, cpu_bw = dram.cost.bytes() / dram.seconds;
  std::printf(
      "\n  This CPU: ~%.0f GFLOP/s (matmul) over ~%.1f GB/s (large ReLU) → about %.0f FLOP per byte\n"
      "  are needed before arithmetic, not memory, sets the time.\n",
      cpu_flops / 1e9, cpu_bw / 1e9, cpu_flops / cpu_bw);
  std::printf(
      "  H200 SXM roof: %.0f TFLOP/s FP32, %.0f TFLOP/s BF16 dense, %.1f TB/s HBM3e → compute-bound above\n"
      "  %.0f FLOP/B in FP32 and %.0f FLOP/B in BF16.\n",
      kH200Fp32 / 1e12, kH200Bf16 / 1e12, kH200Bandwidth / 1e12, kH200Fp32 / kH200Bandwidth,
      kH200Bf16 / kH200Bandwidth);
  std::printf("  What each op above could reach on an H200 in FP32, min(peak, intensity × bandwidth):\n");
  for (const Measured& r : rows) {
    const double roof = std::min(kH200Fp32, r.cost.intensity() * kH200Bandwidth);
    std::printf("    %s %8.2f TFLOP/s = %5.1f%% of peak, %s-bound\n", pad_right(r.name, 24).c_str(), roof / 1e12,
                100 * roof / kH200Fp32, roof < kH200Fp32 ? "memory" : "compute");
  }
  std::printf("\n");
}

// ---- 3. memory of a training step ----------------------------------------------------

struct StepMemory {
  int64_t parameter_count = 0;
  int64_t parameters = 0;       // bytes, tagged parameter
  int64_t optimizer = 0;        // Adam's m and v
  int64_t activations = 0;      // peak: what the forward keeps for backward
  int64_t gradients = 0;        // peak during backward (parameter and activation gradients)
  int64_t param_gradients = 0;  // left after backward: one per parameter
  int64_t workspace = 0;        // peak of the convolutions' scratch buffers
  int64_t other = 0;            // the input batch and its labels
  int64_t total = 0;            // peak of everything together
};

// The tracker's bytes per tag, relative to a starting point: whatever was
// alive before (nothing, in this program) is not counted.
class TrackerDelta {
 public:
  TrackerDelta() {
    MemoryTracker& tracker = MemoryTracker::instance();
    tracker.reset_peaks();  // peaks now restart from the current bytes
    for (int t = 0; t < kMemTagCount; ++t) start_[t] = tracker.tag(MemTag(t)).current;
    total_start_ = tracker.total().current;
  }
  int64_t current(MemTag t) const { return MemoryTracker::instance().tag(t).current - start_[int(t)]; }
  int64_t peak(MemTag t) const { return MemoryTracker::instance().tag(t).peak - start_[int(t)]; }
  int64_t total_peak() const { return MemoryTracker::instance().total().peak - total_start_; }

 private:
  int64_t start_[kMemTagCount];
  int64_t total_start_;
};

// Builds the model and Adam, then runs one forward, backward and update on
// `batch` images, reading the tracker between phases.
StepMemory measure_step(const std::string& model_name, int64_t batch) {
  const TrackerDelta tracker;
  StepMemory m;
  auto model = nn::make_model(model_name, {1, 28, 28}, 10, 1);
  m.parameter_count = model->parameter_count();
  m.parameters = tracker.current(MemTag::parameter);
  nn::Adam adam(model->parameters(), 1e-3);
  m.optimizer = tracker.current(MemTag::optimizer);
  const data::Dataset images = data::make_squares(batch, 10, 28, 5);  // (batch,1,28,28), 10 classes
  {
    ag::Tape tape;
    ag::TapeScope recording(tape);
    ag::Var loss;
    {
      // The softmax probabilities the loss keeps are activations too.
      MemoryScope scope(MemTag::activation, "loss");
      loss = ag::softmax_cross_entropy((*model)(ag::Var(images.inputs)), images.labels);
    }
    adam.zero_grad();
    tape.backward(loss);  // frees the activations when done
  }
  m.param_gradients = tracker.current(MemTag::gradient);
  adam.step();
  m.activations = tracker.peak(MemTag::activation);
  m.gradients = tracker.peak(MemTag::gradient);
  m.workspace = tracker.peak(MemTag::workspace);
  m.other = tracker.current(MemTag::other);
  m.total = tracker.total_peak();
  return m;
}

// The per-layer table, with each layer's parameter and output bytes beside
// its FLOPs: what it stores for ever, and what it adds per batch.
void print_layers(const std::vector<nn::LayerSummary>& layers) {
  std::printf("  %s %s %s %9s %10s %9s %7s %11s\n", pad_right("layer", 8).c_str(), pad_right("", 28).c_str(),
              pad_right("output", 15).c_str(), "params", "param KiB", "MFLOP", "FLOP/B", "output KiB");
  int64_t params = 0, out_bytes = 0;
  OpCost total;
  for (const nn::LayerSummary& l : layers) {
    std::printf("  %s %s %s %9lld %10.1f %9.2f %7.2f %11.1f\n", pad_right(l.name, 8).c_str(),
                pad_right(l.description, 28).c_str(), pad_right(l.output.str(), 15).c_str(),
                static_cast<long long>(l.parameters), 4.0 * l.parameters / 1024, l.forward.flops / 1e6,
                l.forward.intensity(), l.output_bytes / 1024.0);
    params += l.parameters;
    out_bytes += l.output_bytes;
    total += l.forward;
  }
  std::printf("  %s %9lld %10.1f %9.2f %7.2f %11.1f\n", pad_right("total", 53).c_str(), static_cast<long long>(params),
              4.0 * params / 1024, total.flops / 1e6, total.intensity(), out_bytes / 1024.0);
}

void print_memory_row(const char* what, int64_t a, int64_t b, const char* note = "") {
  std::printf("  %-34s %12s %12s%s%s\n", what, format_bytes(a).c_str(), format_bytes(b).c_str(), *note ? "  " : "",
              note);
}

// Prints the per-layer table and the measured split; returns false when a
// measurement contradicts its formula.
bool model_memory(const char* title, const std::string& model_name) {
  std::printf("  %s, per layer for a batch of 64 (nn::summarize):\n", title);
  auto preview = nn::make_model(model_name, {1, 28, 28}, 10, 1);
  const std::vector<nn::LayerSummary> layers = nn::summarize(*preview, {64, 1, 28, 28});
  preview.reset();
  print_layers(layers);
  int64_t output_bytes = 0;
  for (const nn::LayerSummary& l : layers) output_bytes += l.output_bytes;

  const StepMemory s = measure_step(model_name, 64), l = measure_step(model_name, 256);
  std::printf("\n  One Adam training step, measured by the memory tracker:\n");
  std::printf("  %-34s %12s %12s\n", "", "batch 64", "batch 256");
  print_memory_row("parameters", s.parameters, l.parameters, "does not depend on the batch");
  print_memory_row("activations kept for backward", s.activations, l.activations, "grows with the batch");
  print_memory_row("gradients, peak during backward", s.gradients, l.gradients);
  print_memory_row("  parameter gradients after it", s.param_gradients, l.param_gradients, "one per parameter");
  print_memory_row("optimizer state (Adam m and v)", s.optimizer, l.optimizer, "two per parameter");
  print_memory_row("workspace, peak (conv scratch)", s.workspace, l.workspace, "freed after each op");
  print_memory_row("input batch and labels", s.other, l.other);
  print_memory_row("everything, at the peak", s.total, l.total);

  // The formulas the chapter states, checked against the measurement.
  const int64_t expected = 4 * s.parameter_count;
  const double growth = double(l.activations) / double(s.activations);
  const bool params_ok = s.parameters == expected && l.parameters == expected;
  const bool adam_ok = s.optimizer == 2 * s.parameters && l.optimizer == 2 * l.parameters;
  const bool grads_ok = s.param_gradients == s.parameters && l.param_gradients == l.parameters;
  const bool growth_ok = growth > 3.5 && growth < 4.5;  // 4× the images, and little that does not scale
  std::printf("  checks: parameters %lld B = 4 B × %lld parameters: %s\n", static_cast<long long>(s.parameters),
              static_cast<long long>(s.parameter_count), params_ok ? "ok" : "FAIL");
  std::printf("          Adam state = 2 × parameters: %s;  parameter gradients = parameters: %s\n",
              adam_ok ? "ok" : "FAIL", grads_ok ? "ok" : "FAIL");
  std::printf("          activations grew %.2f× for 4× the batch: %s\n", growth, growth_ok ? "ok" : "FAIL");
  std::printf(
      "  The layer outputs (the table's last column) add up to %s at batch 64; the tape keeps\n"
      "  %.2f× that, because some ops keep more than their output (see the README).\n\n",
      format_bytes(output_bytes).c_str(), double(s.activations) / double(output_bytes));
  return params_ok && adam_ok && grads_ok && growth_ok;
}

bool training_memory() {
  std::printf("3. Parameters, activations, gradients and optimizer state\n\n");
  bool ok = model_memory("LeNet-5", "lenet5");
  ok = model_memory("mini-AlexNet", "alexnet") && ok;
  std::printf(
      "  FP32 training with Adam keeps 16 bytes per parameter (weight 4, gradient 4, m 4, v 4)\n"
      "  before a single activation: 7 billion parameters → %.0f GB.\n",
      7e9 * 16 / 1e9);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<bool> args = warpnet::lesson::parse_quick(argc, argv);
  if (!args) return 2;
  const bool quick = *args;
  try {
    std::printf("Lesson 02 — FLOPs, bytes and memory\n===================================\n\n");
    bool ok = count_flops();
    roofline(quick);
    ok = training_memory() && ok;
    std::printf("\n%s\n", ok ? "All checks passed." : "SOME CHECKS FAILED.");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lesson02: %s\n", e.what());
    return 1;
  }
}
