// Lesson 10 — Inference: a trained LeNet-5 put to work. Prints:
//   1. the fp32 model: trained here on Fashion-MNIST with nn::Trainer, or
//      loaded from a `warpnet train` checkpoint (--checkpoint)
//   2. weight-only quantization (nn/quantize): test accuracy, change from
//      fp32 in points and in predictions, weight memory and its ratio, for
//      fp16, bf16, fp8 e4m3 (per tensor, per channel), fp4 e2m1 (one scale
//      per tensor, and MX blocks of 32)
//   3. the target: fp4 e2m1 with MX within 3 points of fp32
//   4. latency against throughput on this CPU: batch 1 to 512, the median of
//      repeated timings
//   5. the GPU side: what the datasheet says, and what is not yet measured
// The program exits 1 when a claim of the chapter does not hold.
//
//   build/bin/lesson10                          # the whole chapter: 60,000 images × 5 epochs (43 s on 2 idle cores)
//   build/bin/lesson10 --checkpoint run.ckpt    # the same, from a `warpnet train --model lenet5` checkpoint
//   build/bin/lesson10 --quick                  # 3,000 images × 1 epoch; what `ctest -R lesson10_inference` runs
//   build/bin/lesson10 --markdown               # part 2's memory table, as the README holds it
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "autograd/functions.hpp"
#include "core/memory.hpp"
#include "core/stats.hpp"
#include "core/text.hpp"
#include "core/timer.hpp"
#include "cpu/ops.hpp"
#include "datasets/idx.hpp"
#include "datasets/synthetic.hpp"
#include "device/datasheet.hpp"
#include "nn/checkpoint.hpp"
#include "lessons/lesson_args.hpp"
#include "lessons/lesson_checks.hpp"
#include "lessons/lesson_data.hpp"
#include "lessons/lesson_machine.hpp"
#include "nn/quantize.hpp"
#include "nn/trainer.hpp"
#include "numeric/format.hpp"

using namespace warpnet;
using nn::WeightFormat;

namespace {

using lesson::check;
using lesson::fixed;
using lesson::grouped;
using lesson::load_average;
using lesson::cpu_model;
using lesson::today_utc;

constexpr int64_t kClasses = 10;

// What each format stores, in words.
const char* how_stored(WeightFormat f) {
  switch (f) {
    case WeightFormat::fp32: return "4 B per weight, as trained";
    case WeightFormat::fp16: return "2 B per weight";
    case WeightFormat::bf16: return "2 B per weight";
    case WeightFormat::e4m3_tensor: return "1 B per weight + one fp32 scale per tensor";
    case WeightFormat::e4m3_channel: return "1 B per weight + one fp32 scale per output channel";
    case WeightFormat::e2m1_tensor: return "½ B per weight + one fp32 scale per tensor";
    case WeightFormat::e2m1_mx: return "½ B per weight + one e8m0 byte per block of 32 inputs";
  }
  return "";
}

// ==== data and the fp32 model ====================================================================

struct Data {
  data::Dataset train, test;
  std::string note;
};

Data load(int64_t n_train, int64_t n_test) {
  lesson::LessonData d = lesson::load_fashion_mnist_or_squares(n_train, n_test, int(kClasses));
  const std::string note =
      d.fashion() ? cat("Fashion-MNIST from ", d.dir, ": ", d.train.size(), " training images, ", d.test.size(),
                        " test images")
                  : cat("NOTE: Fashion-MNIST could not be read (", d.why_synthetic,
                        ");\n  synthetic images (data::make_squares) instead, far easier than clothes");
  return {std::move(d.train), std::move(d.test), note};
}

std::unique_ptr<nn::Sequential> fp32_model(const Data& d, int epochs, const std::string& checkpoint) {
  std::printf("1. The fp32 model\n\n  %s\n", d.note.c_str());
  if (!checkpoint.empty()) {
    const nn::Checkpoint ck = nn::load_checkpoint(checkpoint);
    WN_CHECK(ck.model == "lenet5", checkpoint, " holds a '", ck.model,
             "' model; this chapter needs LeNet-5 (warpnet train --model lenet5)");
    auto model = nn::make_lenet5(kClasses, ck.seed);
    nn::restore(ck, *model, nullptr);
    std::printf("  LeNet-5 from %s: %lld epoch%s, %lld steps, seed %llu\n\n", checkpoint.c_str(),
                static_cast<long long>(ck.epoch), ck.epoch == 1 ? "" : "s", static_cast<long long>(ck.steps),
                static_cast<unsigned long long>(ck.seed));
    return model;
  }
  nn::TrainOptions o;
  o.model = "lenet5";
  o.epochs = epochs;
  o.batch_size = 64;
  o.optimizer = "adam";
  o.lr = 1e-3;
  o.seed = 1;
  nn::Trainer trainer(o, d.train, d.test);
  std::printf("  LeNet-5 trained here in fp32: Adam lr 0.001, batch 64, seed 1, %d epoch%s (nn::Trainer)\n", epochs,
              epochs == 1 ? "" : "s");
  std::printf("  %-7s %10s %10s %10s %9s %9s\n", "epoch", "train loss", "test loss", "test acc", "seconds",
              "images/s");
  trainer.run({}, [](const nn::EpochStats& e) {
    std::printf("  %-7d %10.4f %10.4f %9.2f%% %9.1f %9.0f\n", e.epoch, e.train_loss, e.test_loss,
                100 * e.test_accuracy, e.seconds, e.images_per_second);
    std::fflush(stdout);
  });
  std::printf("\n");
  // Hand the trained weights to a model of our own (the trainer's goes with it).
  auto model = nn::make_lenet5(kClasses, 1);
  nn::restore(nn::capture("lenet5", trainer.model(), nullptr, epochs, 1, ""), *model, nullptr);
  return model;
}

// A copy of `model` (its weights through a checkpoint in memory).
std::unique_ptr<nn::Sequential> copy_of(nn::Sequential& model) {
  auto copy = nn::make_lenet5(kClasses, 1);
  nn::restore(nn::capture("lenet5", model, nullptr, 0, 1, ""), *copy, nullptr);
  return copy;
}

// ==== 2. weight-only quantization =================================================================

// The logits of every test image, in eval mode: (N, classes) row-major.
std::vector<float> logits_of(nn::Sequential& model, const data::Dataset& test) {
  ag::NoGradScope no_grad;
  model.set_training(false);
  std::vector<float> out;
  data::Batches batches(test, 500, false, 0);
  data::Batch b;
  while (batches.next(b)) {
    const Tensor logits = model(ag::Var(b.inputs)).value();  // (B, classes)
    out.insert(out.end(), logits.data<float>(), logits.data<float>() + logits.numel());
  }
  return out;
}

int64_t argmax(const float* row) { return std::max_element(row, row + kClasses) - row; }

struct Row {
  WeightFormat format;
  nn::ModelQuantization q;
  double accuracy = 0;
  int64_t correct = 0;  // test images classified right
  int64_t changed = 0;  // predictions that differ from fp32's
  int64_t could = 0;    // images whose fp32 margin is below twice the largest logit change
};

Row evaluate_format(nn::Sequential& fp32, WeightFormat format, const data::Dataset& test,
                    const std::vector<float>& reference) {
  auto model = copy_of(fp32);
  Row r{format, nn::quantize_model(*model, format)};
  const std::vector<float> logits = logits_of(*model, test);
  const int64_t n = test.size();
  for (int64_t i = 0; i < n; ++i) {
    const float* q = &logits[size_t(i * kClasses)];
    const float* ref = &reference[size_t(i * kClasses)];
    const int64_t guess = argmax(q), ref_guess = argmax(ref);
    r.correct += guess == test.labels.data<int32_t>()[i];
    r.changed += guess != ref_guess;
    // The prediction can change only if some logit moved by half the fp32
    // margin between the top class and the runner-up.
    float moved = 0, second = -INFINITY;
    for (int64_t c = 0; c < kClasses; ++c) {
      moved = std::max(moved, std::abs(q[c] - ref[c]));
      if (c != ref_guess) second = std::max(second, ref[c]);
    }
    r.could += ref[ref_guess] - second <= 2 * moved;
  }
  r.accuracy = double(r.correct) / double(n);
  return r;
}

// The rows of part 2's memory columns; counts only, so --markdown prints
// them from a fresh model without training.
void memory_table(const std::vector<Row>& rows, bool markdown) {
  if (markdown)
    std::printf("| format | stored as | weight bytes | of which scales | + biases (fp32) | model bytes | "
                "weights vs fp32 |\n|---|---|---:|---:|---:|---:|---:|\n");
  else
    std::printf("  %-17s %12s %10s %12s %9s\n", "format", "weight bytes", "scales", "model bytes", "vs fp32");
  for (const Row& r : rows) {
    const nn::ModelQuantization& q = r.q;
    const double ratio = double(q.fp32_weight_bytes()) / double(q.weight_bytes);
    if (markdown)
      std::printf("| %s | %s | %s | %s | %s | %s | %s× |\n", nn::name(r.format).c_str(), how_stored(r.format),
                  grouped(q.weight_bytes).c_str(), grouped(q.scale_bytes).c_str(), grouped(4 * q.bias_values).c_str(),
                  grouped(q.total_bytes()).c_str(), fixed(ratio, 3).c_str());
    else
      std::printf("  %-17s %12s %10s %12s %8.3f×\n", nn::name(r.format).c_str(), grouped(q.weight_bytes).c_str(),
                  grouped(q.scale_bytes).c_str(), grouped(q.total_bytes()).c_str(), ratio);
  }
  if (markdown)
    std::printf("\nCounted by `build/bin/lesson10 --markdown` (`nn::quantize_model` on LeNet-5's 61,470 weights in "
                "5 tensors and 236 biases): counts, the same on any machine.\n");
}

std::vector<Row> part2(nn::Sequential& fp32, const data::Dataset& test) {
  std::printf("2. Weight-only quantization: the same model, its weights stored in each format\n\n");
  const std::vector<float> reference = logits_of(fp32, test);
  std::vector<Row> rows;
  for (WeightFormat f : nn::weight_formats()) rows.push_back(evaluate_format(fp32, f, test, reference));
  const Row& base = rows.front();
  std::printf("  %-17s %9s %9s %12s %12s %14s %9s\n", "format", "test acc", "vs fp32", "predictions", "margins",
              "weight error", "weights");
  std::printf("  %-17s %9s %9s %12s %12s %14s %9s\n", "", "", "(points)", "changed", "allowing", "(relative)",
              "zeroed");
  for (const Row& r : rows)
    std::printf("  %-17s %8.2f%% %+9.2f %12lld %12lld %14.2e %9lld\n", nn::name(r.format).c_str(),
                100 * r.accuracy, 100 * (r.accuracy - base.accuracy), static_cast<long long>(r.changed),
                static_cast<long long>(r.could), r.q.relative_error, static_cast<long long>(r.q.zeroed));
  std::printf("  (over %lld test images; 'margins allowing': images whose fp32 top-two logit gap is at most twice\n"
              "   the largest change of their logits, the only ones whose prediction could change)\n\n",
              static_cast<long long>(test.size()));
  memory_table(rows, false);
  std::printf("  (weights: the 5 weight tensors, 61,470 values, scales included; model: + 236 fp32 biases)\n\n");

  const double n = double(test.size());
  // The count of right answers moves by at most the predictions that
  // changed, and a prediction changes only where the margin allows it: a
  // bound derived from the logits, not a tolerance.
  bool within = true;
  for (const Row& r : rows)
    within = within && std::llabs(r.correct - base.correct) <= r.changed && r.changed <= r.could;
  std::printf("  every format's accuracy moved by at most the images its margins allowed: %s\n", check(within));
  // Rounding to nearest moves a normal value by at most half a step, 2^-11
  // of it with fp16's 11 significant bits and 2^-8 with bf16's 8; so the
  // whole weights' ||error|| / ||w|| is at most that too (LeNet's weights
  // are far above fp16's subnormals).
  // The chapter's claim for the 16-bit formats, a result rather than a
  // tolerance: they change at most 1% of the predictions.
  const Row &fp16 = rows[1], &bf16 = rows[2];
  std::printf("  fp16 and bf16 weights: relative error %.1e ≤ 2^-11 and %.1e ≤ 2^-8, predictions changed %lld and\n"
              "  %lld of %lld, within 1%% of the images: %s\n",
              fp16.q.relative_error, bf16.q.relative_error, static_cast<long long>(fp16.changed),
              static_cast<long long>(bf16.changed), static_cast<long long>(test.size()),
              check(fp16.q.relative_error <= numeric::pow2(-11) && bf16.q.relative_error <= numeric::pow2(-8) &&
                    double(fp16.changed) <= 0.01 * n && double(bf16.changed) <= 0.01 * n));
  // MX's scales are powers of two: a block's largest weight lands anywhere in
  // [4, 8) of e2m1's top binade, so up to almost a bit of resolution is lost
  // against a per-tensor fp32 scale that maps amax exactly to 6. What the
  // block scales win is reach: small blocks get a small scale, and fewer
  // weights fall below e2m1's smallest step.
  const Row &fp4 = rows[5], &mx = rows[6];
  std::printf("  fp4 weights: MX relative error %.3f, one scale per tensor %.3f; weights stored as zero: MX %lld,\n"
              "  one scale %lld of %lld; MX zeroes fewer: %s\n",
              mx.q.relative_error, fp4.q.relative_error, static_cast<long long>(mx.q.zeroed),
              static_cast<long long>(fp4.q.zeroed), static_cast<long long>(mx.q.weight_values),
              check(mx.q.zeroed < fp4.q.zeroed));
  // The ratios: 2 exactly for 16 bits; fp8 4n/(n + 4·tensors); MXFP4 4n over
  // n/2 (rounded up per tensor) + one byte per block.
  const double r16 = double(fp16.q.fp32_weight_bytes()) / double(fp16.q.weight_bytes);
  const double r8 = double(rows[3].q.fp32_weight_bytes()) / double(rows[3].q.weight_bytes);
  const double r4 = double(mx.q.fp32_weight_bytes()) / double(mx.q.weight_bytes);
  std::printf("  weight memory: fp16 %.3f× (exactly 2), fp8 %.3f× (4 less the 5 scales), MXFP4 %.3f× (128/17 = 7.53\n"
              "  for whole blocks; LeNet's rows of 25, 150, 400, 120, 84 end in partial blocks): %s\n\n",
              r16, r8, r4, check(r16 == 2.0 && r8 < 4.0 && r8 > 3.99 && r4 > 7.4 && r4 < 128.0 / 17.0));
  return rows;
}

// ==== 3. the target ================================================================================

void part3(const std::vector<Row>& rows, bool quick) {
  std::printf("3. The target: fp4 e2m1 weights with microscaling within 3 points of fp32\n\n");
  const Row &base = rows.front(), &fp4 = rows[5], &mx = rows[6];
  const double gap = 100 * (base.accuracy - mx.accuracy);
  std::printf("  fp32 %.2f%%, fp4-e2m1-mx %.2f%%: %+.2f points; fp4 with one scale per tensor %+.2f points\n",
              100 * base.accuracy, 100 * mx.accuracy, -gap, 100 * (fp4.accuracy - base.accuracy));
  if (quick)
    std::printf("  (--quick: a model trained briefly on few images; the target is judged by the whole chapter)\n\n");
  else
    std::printf("  within 3 points: %s\n\n", check(gap <= 3.0));
}

// ==== 4. latency against throughput ===================================================================

// The median milliseconds of one forward pass over `x`, repeated for about
// `budget` seconds (at least 5 times) after one warm-up pass.
double time_forward(nn::Sequential& model, const ag::Var& x, double budget, size_t& repeats) {
  (void)model(x);  // warm-up: first-touch allocations
  std::vector<double> ms;
  Timer total;
  while (ms.size() < 5 || (total.seconds() < budget && ms.size() < 1000)) {
    Timer t;
    const ag::Var y = model(x);
    ms.push_back(t.milliseconds());
  }
  repeats = ms.size();
  return median(ms);
}

void part4(nn::Sequential& model, const data::Dataset& test, bool quick) {
  const int threads = cpu::num_threads();
  std::printf("4. Latency against throughput on this CPU (fp32 compute; load average %s when timing began)\n\n",
              load_average().c_str());
  ag::NoGradScope no_grad;
  model.set_training(false);
  const double budget = quick ? 0.05 : 1.0;  // seconds of timing per batch size and thread count
  std::printf("  %-6s %-9s %14s %12s %14s %12s\n", "", "", "1 thread", "", cat(threads, " threads").c_str(), "");
  std::printf("  %-6s %-9s %14s %12s %14s %12s\n", "batch", "repeats", "ms per batch", "images/s", "ms per batch",
              "images/s");
  double rate1 = 0, best = 0;
  int64_t best_batch = 1;
  for (int64_t batch : {1, 8, 32, 128, 512}) {
    const ag::Var x(data::head(test, batch).inputs);
    size_t n1 = 0, n2 = 0;
    cpu::set_num_threads(1);
    const double one = time_forward(model, x, budget, n1);
    cpu::set_num_threads(threads);
    const double all = time_forward(model, x, budget, n2);
    const double rate = double(batch) / (one / 1e3);
    if (batch == 1) rate1 = rate;
    if (rate > best) best = rate, best_batch = batch;
    std::printf("  %-6lld %-9s %14.3f %12.0f %14.3f %12.0f\n", static_cast<long long>(batch),
                cat(n1, "/", n2).c_str(), one, rate, all, double(batch) / (all / 1e3));
  }
  std::printf("  (the median of the repeats; a batch's time is also the latency of every request in it, before\n"
              "   any wait for the batch to fill; load average %s when timing ended)\n",
              load_average().c_str());
  std::printf("  one thread: the most images per second at batch %lld, %.2f× batch 1's rate\n\n",
              static_cast<long long>(best_batch), best / rate1);
}

// ==== 5. the GPU side ===============================================================================

void part5(const std::vector<Row>& rows) {
  std::printf("5. The GPU side (H200 datasheet figures and recorded L2 size; not yet measured on a GPU)\n\n");
  const auto model = nn::make_lenet5(kClasses, 1);
  const double flops = model->cost(Shape({1, 1, 28, 28})).flops;
  const double fp32_bytes = double(rows.front().q.total_bytes()), mx_bytes = double(rows.back().q.total_bytes());
  std::printf("  one image: %.2f MFLOP (Module::cost); the weights: %s B in fp32, %s B in MXFP4\n", flops / 1e6,
              grouped(int64_t(fp32_bytes)).c_str(), grouped(int64_t(mx_bytes)).c_str());
  // H200 datasheet (src/device/datasheet.hpp): 989.4 TFLOP/s bf16 dense, 4.8 TB/s HBM3e. L2: 62,914,560 B
  // (60 MiB), what the device reports in the committed records (bench/results/nvidia-h200-2026-11-30*.json).
  namespace h200 = device::datasheet::h200;
  std::printf("  computed from the datasheet: batch 512 is %.0f MFLOP, %.2f µs at 989 TFLOP/s (bf16); reading\n"
              "  the fp32 weights once from HBM at 4.8 TB/s takes %.0f ns, and they fit in the 60 MiB L2 %.0f times\n"
              "  over. A network this small is bound by neither: by kernel launches and their latency, which\n"
              "  no GPU run has measured for this chapter yet.\n\n",
              512 * flops / 1e6, 512 * flops / h200::kBf16Flops * 1e6, fp32_bytes / h200::kMemoryBytesPerSecond * 1e9,
              62914560.0 / fp32_bytes);
}

// The ModelQuantization of every format on a fresh LeNet-5 (counts only).
std::vector<Row> counted_rows() {
  std::vector<Row> rows;
  for (WeightFormat f : nn::weight_formats()) {
    auto model = nn::make_lenet5(kClasses, 1);
    rows.push_back({f, nn::quantize_model(*model, f)});
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  lesson::answer_help(argc, argv, "[--quick] [--checkpoint FILE] | --markdown");
  bool quick = false, markdown = false;
  std::string checkpoint;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--markdown") == 0) {
      markdown = true;
    } else if (std::strcmp(argv[i], "--checkpoint") == 0 && i + 1 < argc) {
      checkpoint = argv[++i];
    } else {
      if (std::strcmp(argv[i], "--checkpoint") == 0)
        std::fprintf(stderr, "%s: --checkpoint needs a FILE (a checkpoint `warpnet train --checkpoint` wrote)\n", argv[0]);
      else
        std::fprintf(stderr, "%s: unknown argument '%s'\n", argv[0], argv[i]);
      std::fprintf(stderr, "usage: %s [--quick] [--checkpoint FILE] | --markdown\n", argv[0]);
      return 2;
    }
  }
  if (markdown && (quick || !checkpoint.empty())) {  // --markdown prints the table alone: the others would do nothing
    std::fprintf(stderr, "%s: --markdown takes no other option\n", argv[0]);
    return 2;
  }
  try {
    if (markdown) {
      memory_table(counted_rows(), true);
      return 0;
    }
    std::printf("Lesson 10 — Inference%s\n=====================\n\n", quick ? " (--quick)" : "");
    std::printf("  %s, %u hardware threads; %s\n\n", cpu_model().c_str(), std::thread::hardware_concurrency(),
                today_utc().c_str());
    const Data d = quick ? load(3000, 1000) : load(60000, 10000);
    auto fp32 = fp32_model(d, quick ? 1 : 5, checkpoint);
    const double trainer_accuracy = nn::evaluate(*fp32, d.test, 500).accuracy;
    const std::vector<Row> rows = part2(*fp32, d.test);
    std::printf("  the fp32 row's accuracy is nn::evaluate's, %.2f%%: %s\n\n", 100 * trainer_accuracy,
                check(std::abs(rows.front().accuracy - trainer_accuracy) < 1e-12));
    part3(rows, quick);
    part4(*fp32, d.test, quick);
    part5(rows);
    return lesson::finish_checks();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lesson10: %s\n", e.what());
    return 1;
  }
}
