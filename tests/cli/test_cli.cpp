// The warpnet command end to end: `op` against the library it wraps, `train`
// on a synthetic set with a report and a checkpoint, and bad input refused
// with a message that names it.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/host_memory.hpp"
#include "core/npy.hpp"
#include "cpu/ops.hpp"
#include "tests/cli/cli_run.hpp"
#include "tests/test_support.hpp"

using namespace warpnet;
using test::Run;
using test::warpnet_cli;

namespace {

std::string path_of(const std::string& name) { return (test::scratch_dir() / name).string(); }

Tensor random_tensor(const Shape& shape, Rng& rng) {
  Tensor t = Tensor::empty(shape);
  fill_uniform(t, rng, -1.0, 1.0);
  return t;
}

void check_same(const Tensor& got, const Tensor& want) {
  REQUIRE(got.shape() == want.shape());
  // The CLI runs the very same function on the very same inputs: bit-identical.
  for (int64_t i = 0; i < want.numel(); ++i) REQUIRE(got.item(i) == want.item(i));
}

}  // namespace

TEST_CASE("warpnet op conv2d writes the output and both gradients") {
  Rng rng(77);
  const Tensor x = random_tensor({2, 3, 9, 7}, rng), w = random_tensor({4, 3, 3, 3}, rng);
  const cpu::Conv2dParams p{2, 1, 1};
  const Tensor y = cpu::conv2d(x, w, Tensor(), p);
  const Tensor gy = random_tensor(y.shape(), rng);
  write_npy(path_of("x.npy"), x);
  write_npy(path_of("w.npy"), w);
  write_npy(path_of("gy.npy"), gy);
  Run run = warpnet_cli(cat("op conv2d --x ", path_of("x.npy"), " --w ", path_of("w.npy"),
                            " --stride 2 --pad 1 --dilation 1 --out ", path_of("y.npy"), " --grad-out ",
                            path_of("gy.npy")));
  INFO(run.output);
  REQUIRE(run.status == 0);
  const cpu::Conv2dGrads g = cpu::conv2d_backward(x, w, gy, p, false);
  check_same(read_npy(path_of("y.npy")), y);
  check_same(read_npy(path_of("y.grad_x.npy")), g.dx);
  check_same(read_npy(path_of("y.grad_w.npy")), g.dw);
}

TEST_CASE("warpnet op softmax-ce accepts int64 labels as PyTorch writes them") {
  Rng rng(78);
  const Tensor logits = random_tensor({3, 5}, rng);
  write_npy(path_of("logits.npy"), logits);
  write_npy(path_of("labels.npy"), Tensor::from<int64_t>({3}, {4, 0, 2}));
  Run run = warpnet_cli(cat("op softmax-ce --x ", path_of("logits.npy"), " --labels ", path_of("labels.npy"),
                            " --out ", path_of("loss.npy")));
  INFO(run.output);
  REQUIRE(run.status == 0);
  const double expected = cpu::softmax_cross_entropy(logits, Tensor::from<int32_t>({3}, {4, 0, 2})).loss;
  CHECK(read_npy(path_of("loss.npy")).item(0) == doctest::Approx(expected).epsilon(1e-6));
}

TEST_CASE("warpnet op softmax-ce refuses labels that are not class indices and a loss gradient that is not one number") {
  Rng rng(80);
  write_npy(path_of("ce-logits.npy"), random_tensor({3, 5}, rng));
  const auto run_with = [&](const Tensor& labels, const std::string& grad) {
    write_npy(path_of("ce-labels.npy"), labels);
    return warpnet_cli(cat("op softmax-ce --x ", path_of("ce-logits.npy"), " --labels ", path_of("ce-labels.npy"),
                           " --out ", path_of("ce-loss.npy"), grad));
  };
  // 2^32 + 9 was cut to 9, and 1.5 to 1.
  Run run = run_with(Tensor::from<int64_t>({3}, {4, (int64_t(1) << 32) + 9, 2}), "");
  CHECK(run.status != 0);
  CHECK(run.output.find(cat(path_of("ce-labels.npy"), ": label 4294967305 at row 1 is not a class index")) !=
        std::string::npos);
  run = run_with(Tensor::from<float>({3}, {4, 1.5f, 2}), "");
  CHECK(run.status != 0);
  CHECK(run.output.find("takes int32 or int64 class indices") != std::string::npos);
  write_npy(path_of("ce-grad.npy"), Tensor::from<float>({2, 2}, {1, 1, 1, 1}));
  run = run_with(Tensor::from<int32_t>({3}, {4, 0, 2}), " --grad-out " + path_of("ce-grad.npy"));
  CHECK(run.status != 0);
  CHECK(run.output.find(cat(path_of("ce-grad.npy"), ": the gradient of softmax-ce's loss, a scalar, is one number")) !=
        std::string::npos);
}

TEST_CASE("warpnet op says which given options its op does not take") {
  Rng rng(81);
  write_npy(path_of("ig-a.npy"), random_tensor({3, 4}, rng));
  write_npy(path_of("ig-b.npy"), random_tensor({4, 2}, rng));
  const Run run = warpnet_cli(cat("op matmul --x ", path_of("ig-a.npy"), " --w ", path_of("ig-b.npy"), " --b ",
                                  path_of("ig-b.npy"), " --stride 2 --trans-b --out ", path_of("ig-c.npy")));
  INFO(run.output);
  CHECK(run.status != 0);  // --trans-b is read: (3,4)·(4,2)ᵀ does not fit
  CHECK(run.output.find("warpnet op matmul: --b ignored: matmul does not take it") != std::string::npos);
  CHECK(run.output.find("warpnet op matmul: --stride ignored: matmul does not take it") != std::string::npos);
  CHECK(run.output.find("--trans-b ignored") == std::string::npos);
}

TEST_CASE("a mistyped option gets the one meant; a pooling op takes the registry's name; bare warpnet is its help") {
  const Run typo = warpnet_cli("train --epoch 2 --limit 64");
  INFO(typo.output);
  CHECK(typo.status != 0);
  CHECK(typo.output.find("warpnet train: --epoch is not an option of it; did you mean --epochs?") != std::string::npos);
  CHECK(typo.output.find("--limit is not an option") == std::string::npos);  // one it has
  Rng rng(82);
  write_npy(path_of("pool-x.npy"), random_tensor({1, 2, 6, 6}, rng));
  const Run pool =
      warpnet_cli(cat("op max_pool2d --x ", path_of("pool-x.npy"), " --kernel 2 --out ", path_of("pool-y.npy")));
  INFO(pool.output);
  CHECK(pool.status == 0);
  CHECK(read_npy(path_of("pool-y.npy")).shape() == Shape{1, 2, 3, 3});  // stride = kernel, as PyTorch's default
  const Run bare = warpnet_cli("");
  CHECK(bare.status == 0);
  CHECK(bare.output.find("Usage: warpnet [OPTIONS] SUBCOMMAND") != std::string::npos);
}

TEST_CASE("warpnet op names the bad input") {
  Rng rng(79);
  write_npy(path_of("a.npy"), random_tensor({3, 4}, rng));
  write_npy(path_of("b.npy"), random_tensor({5, 2}, rng));
  Run run = warpnet_cli(cat("op matmul --x ", path_of("a.npy"), " --w ", path_of("b.npy"), " --out ",
                            path_of("c.npy")));
  CHECK(run.status != 0);
  CHECK(run.output.find("matmul: A is (3,4), B is (5,2): inner dimensions differ") != std::string::npos);
  // ... and which files A and B came from.
  CHECK(run.output.find(cat("op matmul (--x ", path_of("a.npy"), ", --w ", path_of("b.npy"), "): ")) !=
        std::string::npos);
  write_file_atomically(path_of("garbage.npy"), "this is not an array");
  run = warpnet_cli(cat("op relu --x ", path_of("garbage.npy"), " --out ", path_of("r.npy")));
  CHECK(run.status != 0);
  CHECK(run.output.find("garbage.npy: not a .npy file") != std::string::npos);
  // An output naming a pipe was replaced by a regular file (as root, /dev/null would be).
  const std::string fifo = path_of("out.fifo");
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  run = warpnet_cli(cat("op relu --x ", path_of("a.npy"), " --out ", fifo));
  CHECK(run.status != 0);
  CHECK(run.output.find(cat("op --out ", fifo, ": not a regular file (a device, pipe or socket)")) != std::string::npos);
  CHECK(std::filesystem::is_fifo(fifo));
  // Two outputs on one file: the gradient replaced the output, which was lost.
  const std::string same = path_of("same.npy");
  std::filesystem::remove(same);
  run = warpnet_cli(cat("op relu --x ", path_of("a.npy"), " --grad-out ", path_of("a.npy"), " --out ", same,
                        " --grad-x ", test::scratch_dir().string(), "/./same.npy"));
  CHECK(run.status != 0);
  CHECK(run.output.find(cat("op: --out and --grad-x name the same file, ", test::scratch_dir().string(),
                            "/./same.npy; name one file each")) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(same));  // refused before anything is written
  // An output on an input's file would replace the data it was computed from.
  const std::string input = read_file(path_of("a.npy"));
  run = warpnet_cli(cat("op relu --x ", path_of("a.npy"), " --grad-out ", path_of("a.npy"), " --out ", same,
                        " --grad-x ", path_of("a.npy")));
  CHECK(run.status != 0);
  CHECK(read_file(path_of("a.npy")) == input);
  CHECK(run.output.find(cat("op: --grad-x names --x's file, ", path_of("a.npy"),
                            ": the output would replace its input; name another file")) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(same));
  // A .npy output replaces only a .npy file (or an empty one).
  const std::string text = path_of("text.txt");
  write_file_atomically(text, "my notes");
  run = warpnet_cli(cat("op relu --x ", path_of("a.npy"), " --out ", text));
  CHECK(run.status != 0);
  CHECK(run.output.find(cat("op --out ", text, ": the file exists and is not a .npy array")) != std::string::npos);
  CHECK(read_file(text) == "my notes");
}

TEST_CASE("warpnet train runs on a synthetic set, reports, checkpoints and resumes") {
  const std::string ckpt = path_of("mlp.ckpt"), report = path_of("report.json");
  std::filesystem::remove(ckpt);
  Run run = warpnet_cli(cat("train --model mlp --data spirals --limit 600 --epochs 2 --batch-size 32 --lr 0.01 ",
                            "--threads 1 --checkpoint ", ckpt, " --report ", report));
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("epoch 2: train loss") != std::string::npos);
  CHECK(run.output.find("memory by tag") != std::string::npos);
  CHECK(std::filesystem::exists(ckpt));
  CHECK(read_file(report).find("\"train_images_per_second\"") != std::string::npos);
  run = warpnet_cli(cat("train --model mlp --data spirals --limit 600 --epochs 3 --batch-size 32 --lr 0.01 ",
                        "--threads 1 --resume --checkpoint ", ckpt));
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("resuming from") != std::string::npos);
  CHECK(run.output.find("changed from here on") == std::string::npos);  // the same settings
  CHECK(run.output.find("epoch 3: train loss") != std::string::npos);
  CHECK(run.output.find("epoch 1: train loss") == std::string::npos);
  // On another device: taken, and said, since its sums run in another order.
  run = warpnet_cli(cat("train --model mlp --data spirals --limit 600 --epochs 4 --batch-size 32 --lr 0.01 ",
                        "--threads 1 --device emu --resume --checkpoint ", ckpt));
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("  changed from here on: --device emu (the checkpoint's run: cpu): the sums run in another "
                        "order, so the last bits differ from either uninterrupted run's") != std::string::npos);
  CHECK(run.output.find("epoch 4: train loss") != std::string::npos);
}

// Blobs' centres come from the seed: a test split drawn with another seed
// put each class elsewhere, and the trained model scored 0% on it.
TEST_CASE("warpnet train on blobs generalizes to the test split, and a finished run resumes to nothing to train") {
  const std::string ckpt = path_of("blobs.ckpt"), report = path_of("blobs.json");
  std::filesystem::remove(ckpt);
  const std::string args =
      "train --model mlp --data blobs --limit 600 --epochs 2 --lr 0.01 --threads 1 --checkpoint " + ckpt;
  Run run = warpnet_cli(cat(args, " --report ", report));
  INFO(run.output);
  REQUIRE(run.status == 0);
  const double trained = nlohmann::json::parse(read_file(report))["test_accuracy"].get<double>();
  CHECK(trained > 0.9);  // seed 1's four blobs are well apart: 99% here (train 97.5%)
  run = warpnet_cli(cat(args, " --resume --report ", report));
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find(cat("nothing to train: ", ckpt, " holds epoch 2, and --epochs is 2")) != std::string::npos);
  CHECK(run.output.find("epoch 3") == std::string::npos);
  CHECK(nlohmann::json::parse(read_file(report))["test_accuracy"].get<double>() == trained);
}

TEST_CASE("warpnet train says which options do nothing in the mode chosen") {
  const Run run = warpnet_cli("train --model mlp --data blobs --limit 60 --epochs 1 --threads 1 --no-fold "
                              "--loss-scale 1024 --bucket-kib 64 --data-dir /nonexistent --momentum 0.5 "
                              "--weight-decay 1e-4");
  INFO(run.output);
  CHECK(run.status == 0);
  for (const char* said : {"--no-fold ignored: it applies to --device emu or cuda",
                           "--loss-scale ignored: it applies to --precision fp16",
                           "--bucket-kib ignored: it applies with --data-parallel",
                           "--data-dir ignored: it applies to --data fashion-mnist",
                           "--momentum ignored: it applies to --optimizer sgd",  // adam, the default
                           "--weight-decay ignored: it applies to --optimizer sgd"})
    CHECK(run.output.find(said) != std::string::npos);
  CHECK(run.output.find("--fp8-window ignored") == std::string::npos);  // only what was given
}

TEST_CASE("warpnet train says when it runs more threads than the machine has cores, and only then") {
  const int cores = int(std::thread::hardware_concurrency());
  REQUIRE(cores > 0);
  const std::string common = "train --model mlp --data blobs --limit 60 --epochs 1 --threads ";
  const Run over = warpnet_cli(cat(common, cores + 1));
  INFO(over.output);
  CHECK(over.status == 0);  // said, and run as asked
  CHECK(over.output.find(cat("note: ", cores + 1, " threads on this machine's ", cores, " cores")) !=
        std::string::npos);
  const Run fits = warpnet_cli(cat(common, cores));
  CHECK(fits.status == 0);
  CHECK(fits.output.find("note:") == std::string::npos);
}

TEST_CASE("warpnet train refuses a report path it cannot write before training, and --resume without --checkpoint") {
  const std::string file = path_of("a-file");
  std::ofstream(file) << "x";
  Run run = warpnet_cli(cat("train --model mlp --data blobs --limit 60 --epochs 1 --report ", file, "/r.json"));
  CHECK(run.status != 0);
  CHECK(run.output.find(cat("train --report ", file, "/r.json: cannot create the directory ", file)) !=
        std::string::npos);
  CHECK(run.output.find("epoch 1") == std::string::npos);
  run = warpnet_cli("train --model mlp --data blobs --limit 60 --resume");
  CHECK(run.status != 0);
  CHECK(run.output.find("--resume requires --checkpoint") != std::string::npos);
  // Numbers CLI11 would take in silence: a seed wrapped to 2^64 − 1, a NaN inside a range.
  for (const char* seed : {"-1", "18446744073709551616", "1e23"}) {
    run = warpnet_cli(cat("train --model mlp --data blobs --limit 60 --seed ", seed));
    CHECK(run.status != 0);
    CHECK(run.output.find(cat("a seed is a whole number from 0 to 18446744073709551615, got ", seed)) !=
          std::string::npos);
  }
  // A synthetic set larger than the machine: refused before it is generated (the OOM killer said nothing).
  run = warpnet_cli("train --model mlp --data blobs --limit 10000000000000");
  CHECK(run.status != 0);
  CHECK(run.output.find("--limit 10000000000000: the blobs set, generated whole with its test split, needs about ") !=
        std::string::npos);
  run = warpnet_cli("train --model mlp --data blobs --limit 60 --optimizer sgd --momentum nan");
  CHECK(run.status != 0);
  CHECK(run.output.find("must be from 0 to 0.999, got nan") != std::string::npos);
}

TEST_CASE("warpnet train replaces no file unasked: an existing checkpoint, or the checkpoint by the report") {
  const std::string ckpt = path_of("kept.ckpt");
  std::filesystem::remove(ckpt);
  const std::string args = "train --model mlp --data blobs --limit 60 --epochs 1 --threads 1 --checkpoint " + ckpt;
  Run run = warpnet_cli(args);
  REQUIRE(run.status == 0);
  const std::string before = read_file(ckpt);
  run = warpnet_cli(args);  // the same command again, without --resume
  INFO(run.output);
  CHECK(run.status != 0);
  CHECK(run.output.find(cat("train --checkpoint ", ckpt, ": the file exists (a checkpoint of mlp after 1 epoch); "
                            "--resume continues from it")) != std::string::npos);
  CHECK(read_file(ckpt) == before);
  const std::string notes = path_of("notes.txt");
  std::ofstream(notes) << "my notes";
  run = warpnet_cli(cat("train --model mlp --data blobs --limit 60 --epochs 1 --threads 1 --checkpoint ", notes));
  CHECK(run.output.find(cat(notes, ": the file exists (not a checkpoint this build reads: ")) != std::string::npos);
  CHECK(read_file(notes) == "my notes");
  run = warpnet_cli(cat(args, " --resume --report ", ckpt));
  CHECK(run.status != 0);
  CHECK(run.output.find("--report and --checkpoint name the same file") != std::string::npos);
  CHECK(read_file(ckpt) == before);
  // A report lands only on a report (JSON) or an empty file: a mistyped
  // --report once replaced the data set it named, or an older checkpoint.
  const std::string report = path_of("report-kept.json");
  for (const std::string& kept : {notes, ckpt}) {
    const std::string held = read_file(kept);
    run = warpnet_cli(cat("train --model mlp --data blobs --limit 60 --epochs 1 --threads 1 --report ", kept));
    CHECK(run.status != 0);
    CHECK(run.output.find(cat("train --report ", kept, ": the file exists and is not a JSON document (train --report "
                              "writes one, which would replace it); it is left as it is")) != std::string::npos);
    CHECK(read_file(kept) == held);
  }
  write_file_atomically(report, "");
  run = warpnet_cli(cat("train --model mlp --data blobs --limit 60 --epochs 1 --threads 1 --report ", report));
  CHECK(run.status == 0);
  run = warpnet_cli(cat("train --model mlp --data blobs --limit 60 --epochs 1 --threads 1 --report ", report));
  CHECK(run.status == 0);  // an earlier report is replaced
  CHECK(read_file(report).starts_with("{"));
  const std::string absent = path_of("absent.ckpt");
  std::filesystem::remove(absent);
  run = warpnet_cli(cat("train --model mlp --data blobs --limit 60 --epochs 1 --threads 1 --resume --checkpoint ",
                        absent));
  CHECK(run.status == 0);
  CHECK(run.output.find(cat("no checkpoint at ", absent, " yet: training from epoch 1")) != std::string::npos);
}

TEST_CASE("warpnet train --device emu trains on the kernels, names them, checkpoints from the device and resumes") {
  const std::string ckpt = path_of("emu.ckpt"), report = path_of("emu.json");
  std::filesystem::remove(ckpt);
  Run run = warpnet_cli(cat("train --model lenet5 --data squares --limit 96 --epochs 1 --batch-size 32 --device emu ",
                            "--checkpoint ", ckpt, " --report ", report));
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("device emu: warpnet's kernels (--kernels best)") != std::string::npos);
  CHECK(run.output.find("kernels launched (the candidate each ran, for the versions that pick one per size): ") !=
        std::string::npos);
  CHECK(run.output.find("conv2d/") != std::string::npos);
  // LeNet-5's four ReLUs folded into conv1, conv2, fc1 and fc2 (the default on a device).
  CHECK(run.output.find("bias + ReLU: one kernel forward and one backward in each of 4 layers") != std::string::npos);
  CHECK(run.output.find("bias_relu/02_vectorized") != std::string::npos);
  CHECK(read_file(report).find("\"device\": \"emu\"") != std::string::npos);
  run = warpnet_cli(cat("train --model lenet5 --data squares --limit 96 --epochs 2 --batch-size 32 --device emu ",
                        "--kernels 1 --no-fold --resume --checkpoint ", ckpt));
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("resuming from") != std::string::npos);
  CHECK(run.output.find("epoch 2: train loss") != std::string::npos);
  CHECK(run.output.find("matmul/01_naive") != std::string::npos);  // --kernels 1: every op's first version
  // --no-fold: the bias add and the ReLU apart.
  CHECK(run.output.find("bias + ReLU") == std::string::npos);
  CHECK(run.output.find("relu/01_grid_stride") != std::string::npos);
}

TEST_CASE("warpnet train says when --kernels chose a version of an op the training never launched") {
  const Run run = warpnet_cli("train --model mlp --data spirals --limit 64 --batch-size 32 --threads 1 --device emu "
                              "--kernels softmax=1,matmul=3");
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("matmul/03_smem_tiled") != std::string::npos);
  // Training takes the fused softmax + cross-entropy, not softmax.
  CHECK(run.output.find("--kernels softmax=1: this training never launched that op, so the choice changed nothing") !=
        std::string::npos);
  CHECK(run.output.find("--kernels matmul=3:") == std::string::npos);
}

TEST_CASE("warpnet train refuses --kernels on the CPU, and --device cuda without a GPU says why") {
  Run run = warpnet_cli("train --model mlp --data spirals --limit 64 --kernels 3");
  CHECK(run.status != 0);
  CHECK(run.output.find("--kernels chooses kernel versions for --device emu or cuda") != std::string::npos);
  run = warpnet_cli("train --model mlp --data spirals --limit 64 --device cuda --kernels nonsense=2");
  CHECK(run.status != 0);
  // Without a GPU the probe's reason comes first; with one, the bad choice is named.
  CHECK(run.output.find(test::gpu_present() ? "nonsense" : "no usable GPU") != std::string::npos);
}

TEST_CASE("warpnet train --precision bf16 trains, reports the precision, and an unknown one names the choices") {
  const std::string report = path_of("bf16.json");
  Run run = warpnet_cli(cat("train --model mlp --data spirals --limit 300 --epochs 1 --batch-size 32 --threads 1 ",
                            "--precision bf16 --report ", report));
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("precision bf16, emulated") != std::string::npos);
  CHECK(run.output.find("precision bf16: test accuracy") != std::string::npos);
  CHECK(run.output.find("counted at their format's width") != std::string::npos);
  CHECK(read_file(report).find("\"name\": \"bf16\"") != std::string::npos);
  run = warpnet_cli("train --model mlp --data spirals --limit 64 --epochs 1 --precision fp16 --threads 1");
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("fp16 loss scaling: final scale") != std::string::npos);
  run = warpnet_cli("train --model mlp --data spirals --limit 64 --precision fp12");
  CHECK(run.status != 0);
  CHECK(run.output.find("fp12") != std::string::npos);
  CHECK(run.output.find("fp32,tf32,bf16,fp16,fp8") != std::string::npos);
  run = warpnet_cli("train --model mlp --data spirals --limit 64 --precision bf16 --device emu");
  CHECK(run.status != 0);
  CHECK(run.output.find("precision of the kernel chosen") != std::string::npos);
}

TEST_CASE("warpnet train on a folder without Fashion-MNIST names the missing file") {
  std::filesystem::create_directories(path_of("empty"));
  Run run = warpnet_cli(cat("train --data-dir ", path_of("empty"), " --epochs 1"));
  CHECK(run.status != 0);
  CHECK(run.output.find("train-images-idx3-ubyte") != std::string::npos);
}

TEST_CASE("warpnet train refuses a test split that is a copy of the training split") {
  // Twelve 28x28 images of different brightness and their labels, as raw
  // IDX files, written under both splits' names.
  std::string images("\0\0\x08\x03\0\0\0\x0c\0\0\0\x1c\0\0\0\x1c", 16), labels("\0\0\x08\x01\0\0\0\x0c", 8);
  for (int i = 0; i < 12; ++i) {
    images += std::string(28 * 28, char(20 * i + 1));
    labels += char(i % 10);
  }
  const std::filesystem::path dir = path_of("copied_split");
  std::filesystem::create_directories(dir);
  for (const char* split : {"train", "t10k"}) {
    write_file_atomically((dir / cat(split, "-images-idx3-ubyte")).string(), images);
    write_file_atomically((dir / cat(split, "-labels-idx1-ubyte")).string(), labels);
  }
  const Run run = warpnet_cli(cat("train --data-dir ", dir.string(), " --epochs 1 --threads 1"));
  INFO(run.output);
  CHECK(run.status != 0);
  CHECK(run.output.find("training and test images are the same: one split's files are a copy of the other's") !=
        std::string::npos);
}

TEST_CASE("warpnet train names an out-of-range number in a line") {
  const std::string lr_rule =
      "--lr: must be a positive float, from FLT_MIN (about 1.2e-38) to FLT_MAX (about 3.4e+38), got ";
  Run run = warpnet_cli("train --lr -1");
  CHECK(run.status != 0);
  CHECK(run.output.find(lr_rule + "-1\n") != std::string::npos);
  CHECK(run.output.size() < 200);  // not the digits of the largest double
  run = warpnet_cli("train --limit -5");
  CHECK(run.status != 0);
  CHECK(run.output.find("--limit: must be a whole number from 0 to 9223372036854775807, got -5") != std::string::npos);
  // Options held in integers: CLI11 read this one as 2^63 − 1 without a word,
  // called 2.5 "not in range 1 to 65536", and said only "Could not convert".
  run = warpnet_cli("train --limit 99999999999999999999");
  CHECK(run.status != 0);
  CHECK(run.output.find("--limit: must be a whole number from 0 to 9223372036854775807, got 99999999999999999999") !=
        std::string::npos);
  run = warpnet_cli("train --batch-size 2.5");
  CHECK(run.status != 0);
  CHECK(run.output.find("--batch-size: must be a whole number from 1 to 65536, got 2.5") != std::string::npos);
  Rng rng(83);
  write_npy(path_of("int-x.npy"), random_tensor({1, 1, 4, 4}, rng));
  const std::string x = path_of("int-x.npy"), y = path_of("int-y.npy");
  run = warpnet_cli(cat("op conv2d --x ", x, " --w ", x, " --out ", y, " --dilation 3000000000"));
  CHECK(run.status != 0);
  CHECK(run.output.find("--dilation: must be a whole number from 1 to 2147483647, got 3000000000") !=
        std::string::npos);
  run = warpnet_cli(cat("op maxpool2d --x ", x, " --out ", y, " --kernel 2 --pad 1e3"));
  CHECK(run.status != 0);
  CHECK(run.output.find("--pad: must be a whole number from 0 to 2147483647, got 1e3") != std::string::npos);
  run = warpnet_cli("train --lr nan");
  CHECK(run.status != 0);
  CHECK(run.output.find(lr_rule + "nan") != std::string::npos);
  run = warpnet_cli("train --lr inf");
  CHECK(run.status != 0);
  CHECK(run.output.find(lr_rule + "inf") != std::string::npos);
  // Positive in double, but the kernels hold it in float (where it is 0).
  run = warpnet_cli("train --lr 1e-320");
  CHECK(run.status != 0);
  CHECK(run.output.find(lr_rule + "1e-320") != std::string::npos);
  // A loss scale whose inverse fp32 cannot hold, and a timeout no collective meets.
  run = warpnet_cli("train --precision fp16 --loss-scale 1e300");
  CHECK(run.status != 0);
  CHECK(run.output.find("--loss-scale: must be from 5.96046e-08 to 1.84467e+19, got 1e300") != std::string::npos);
  run = warpnet_cli("train --data-parallel --dist-timeout 0.000001");
  CHECK(run.status != 0);
  CHECK(run.output.find("--dist-timeout: must be from 1 to 86400, got 0.000001") != std::string::npos);
}

TEST_CASE("warpnet tour trains, runs the kernels beside the CPU, and without a GPU shows a recorded GPU's run") {
  const Run run = warpnet_cli("tour --limit 256 --threads 2");
  INFO(run.output);
  if (!test::fashion_mnist_installed()) {
    CHECK(run.status != 0);
    CHECK(run.output.find("Fashion-MNIST: ") != std::string::npos);  // which file it lacks, and where
    MESSAGE("Fashion-MNIST is not installed (scripts/setup.sh installs it): the tour said so, and nothing more to check");
    return;
  }
  REQUIRE(run.status == 0);
  CHECK(run.output.find("LeNet-5 reached") != std::string::npos);
  CHECK(run.output.find("loss on the kernels") != std::string::npos);
  if (run.output.find("The GPU epoch is skipped") != std::string::npos) {
    // The source tree's committed records (bench/results/train-*.json): CPU and GPU from one run.
    CHECK(run.output.find("What a GPU made of LeNet-5, recorded on one (") != std::string::npos);
    CHECK(run.output.find("images/s:") != std::string::npos);
    CHECK(run.output.find("× faster") != std::string::npos);
  }
}

TEST_CASE("warpnet names a command it does not have, and lists those it has") {
  const Run run = warpnet_cli("trian --epochs 1");
  CHECK(run.status != 0);
  CHECK(run.output.find("warpnet: no command 'trian' (the commands: tour, train, op, info, trace, bench;") !=
        std::string::npos);
}

TEST_CASE("warpnet info describes the build") {
  Run run = warpnet_cli("info");
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("cpu: ") != std::string::npos);
  CHECK(run.output.find("gpu: ") != std::string::npos);
}

TEST_CASE("warpnet info --kernels says where this build can run each kernel") {
  const bool toolkit = test::built_with_toolkit();
  const Run run = warpnet_cli("info --kernels");
  INFO(run.output);
  REQUIRE(run.status == 0);
  const size_t naive = run.output.find("matmul/01_naive");
  REQUIRE(naive != std::string::npos);
  const std::string line = run.output.substr(naive, run.output.find('\n', naive) - naive);
  if (toolkit) {
    CHECK(line.find(" emu and gpu ") != std::string::npos);
  } else {  // no CUDA copy: "emu and gpu" would promise what this build cannot do
    CHECK(run.output.starts_with("(this build has no GPU kernels: it was built without the CUDA toolkit"));
    CHECK(line.find(" emu ") != std::string::npos);
    CHECK(run.output.find("emu and gpu") == std::string::npos);
  }
}

TEST_CASE("warpnet trace runs a registered kernel traced, prints its memory summary and writes the JSON") {
  const std::string json = path_of("trace.json");
  Run run = warpnet_cli(cat("trace matmul/3 --size 33,17,40 --json ", json, " --block 1,0 --warp 1"));
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("matches the CPU reference") != std::string::npos);
  CHECK(run.output.find("bank-conflict degree 1.00") != std::string::npos);
  // The per-line table names the kernel's source line: 34 is the A-tile load
  // (`As[ar][ak] = ...`); an edit above it in that file moves it.
  CHECK(run.output.find("kernels/matmul/03_smem_tiled.cu:34") != std::string::npos);
  const std::string text = read_file(json);
  CHECK(text.find("\"id\": \"matmul/03_smem_tiled\"") != std::string::npos);
  CHECK(text.find("\"kernel\": \"sgemm_smem_tiled<16, false, false>\"") != std::string::npos);
  CHECK(text.find("\"matches_reference\": true") != std::string::npos);
  CHECK(text.find("\"at_barrier\": true") != std::string::npos);  // the recorded warp's stops

  // A version of two kernels (split-K, then the sum of the slices): both are traced.
  Run split = warpnet_cli("trace matmul/10 --size 33,47,300");
  INFO(split.output);
  REQUIRE(split.status == 0);
  CHECK(split.output.find("kernel 1 of 2: sgemm_warptiling<32, 32, 32") != std::string::npos);
  CHECK(split.output.find("kernel 2 of 2: ") != std::string::npos);
  CHECK(split.output.find("sum_splits<256>, 1 launch") != std::string::npos);

  // Boxes the copy engine loads are no instruction's: counted apart, and in
  // the bytes asked for. conv v13 at 2 images, 1 pixel tile and 2 channel
  // tiles of 256, 18 k-steps each: 72 stages of a 16 KiB x box and a 32 KiB w box.
  Run tma = warpnet_cli("trace conv2d_nhwc/13 --size 2,72,9,11,264,3,3,2,1,2");
  INFO(tma.output);
  REQUIRE(tma.status == 0);
  CHECK(tma.output.find("TMA copies      144 boxes, 3538944 bytes (the largest 32768)") != std::string::npos);
  CHECK(tma.output.find("global bytes asked for: 3.56e+06") != std::string::npos);
  // conv v16, in fp32, at the same size: its 40 pixels in one tile of 96
  // (the shorter tile: two tiles in one round, or in two on one SM, are
  // fewer rows at 96 than at 128) and 2 channel tiles of 256, 27 k-steps
  // each (9 taps x 3 steps of 32 channels): 54 stages of a 12 KiB im2col
  // copy of x and a 32 KiB box of w. The consumers' 16-byte loads from the
  // swizzled stages meet no bank conflict.
  Run fp32_tma = warpnet_cli("trace conv2d_nhwc/16 --size 2,72,9,11,264,3,3,2,1,2");
  INFO(fp32_tma.output);
  REQUIRE(fp32_tma.status == 0);
  CHECK(fp32_tma.output.find("kernel conv2d_implicit_gemm_fp32_tma<256, 6>") != std::string::npos);
  CHECK(fp32_tma.output.find("TMA copies      108 boxes, 2433024 bytes (the largest 32768)") != std::string::npos);
  CHECK(fp32_tma.output.find("shared loads   bank-conflict degree 1.00") != std::string::npos);
  // Stride 9 is past TMA's element strides: v06's kernel runs, and copies
  // nothing; the trace gives the launch that ran (9 output pixels, 8 output
  // channels: one 128 x 64 tile of 256 threads), not v16's registered one.
  Run past_tma = warpnet_cli("trace conv2d_nhwc/16 --size 1,8,20,20,8,3,3,9,1,1");
  INFO(past_tma.output);
  REQUIRE(past_tma.status == 0);
  CHECK(past_tma.output.find("kernel conv2d_nhwc_vectorized<128, 64, 8, 8, 4>, 1 launch, 8 warps, grid (1,1,1), "
                             "block (256,1,1)\n") != std::string::npos);
  CHECK(past_tma.output.find("TMA copies") == std::string::npos);

  Run unknown = warpnet_cli("trace matmul/99 --size 4,4,4");
  CHECK(unknown.status != 0);
  CHECK(unknown.output.find("matmul/01_naive, matmul/02_coalesced, matmul/03_smem_tiled") != std::string::npos);
  // Past 64 bits was "not whole numbers"; a trailing comma's empty item was dropped (K ran as the default).
  Run huge_size = warpnet_cli("trace matmul/01 --size 99999999999999999999,4,4");
  CHECK(huge_size.status != 0);
  CHECK(huge_size.output.find("trace: --size '99999999999999999999,4,4': 99999999999999999999 is past the largest "
                              "size, 2^63 - 1") != std::string::npos);
  Run trailing_comma = warpnet_cli("trace matmul/01 --size 4,4,");
  CHECK(trailing_comma.status != 0);
  CHECK(trailing_comma.output.find("trace: --size '4,4,' must be comma-separated whole numbers") != std::string::npos);
  Run bad_size = warpnet_cli("trace matmul/01 --size 4,4,4,0,0,1");
  CHECK(bad_size.status != 0);
  CHECK(bad_size.output.find("matmul takes 1 to 5 sizes (M,N,K,trans_a,trans_b), got 6") != std::string::npos);
  // Sizes the op cannot take are refused before a launch (a zero stride once divided by zero).
  Run zero_stride = warpnet_cli("trace conv2d/01 --size 1,1,5,5,1,3,3,0");
  CHECK(zero_stride.status != 0);
  CHECK(zero_stride.output.find("conv2d: stride = 0 at N=1 C=1 H=5 W=5 K=1 R=3 S=3 stride=0 pad=1 dilation=1: it "
                                "must be at least 1") != std::string::npos);
  // A watched warp no launch has is named, not passed over in silence.
  Run no_warp = warpnet_cli("trace matmul/3 --size 33,17,40 --block 9,0 --warp 1");
  CHECK(no_warp.status != 0);
  CHECK(no_warp.output.find("trace: block (9,0,0) warp 1 never stopped: no launch of matmul/03_smem_tiled") !=
        std::string::npos);
}

TEST_CASE("warpnet trace refuses, up front and saying why, work that would run for hours or outgrow memory") {
  // 1024^3 is the most: the naive kernel's accesses are a little more.
  Run run = warpnet_cli("trace matmul/1 --size 1024,1024,1024");
  CHECK(run.status != 0);
  CHECK(run.output.find("matmul/01_naive at M=1024 N=1024 K=1024 trans_a=0 trans_b=0 is 2.14853e+09 4-byte "
                        "accesses, past the 2.14748e+09 (a 1024^3 matmul's operations) a traced run takes") !=
        std::string::npos);
  // Within that, but the race check's shadow is 12 bytes for each byte of 2.2 GiB of buffers.
  if (available_memory_bytes() >= (int64_t(28) << 30)) {  // below the 28.31 needed: refused for sure
    MESSAGE("this machine has room for the 28 GiB of shadow: the refusal is not checked here");
    return;
  }
  run = warpnet_cli("trace add/1 --size 200000000");
  CHECK(run.status != 0);
  CHECK(run.output.find("trace: add/01_grid_stride at n=200000000 needs about 28.31 GiB for the emulator's race "
                        "check (12 bytes for each byte of its 2.24 GiB of buffers); this machine has ") !=
        std::string::npos);
  // Where the outputs' shadow alone is past the memory (26 GiB here), that is
  // said before the 1.9 GiB of inputs are made ("at least", not "about").
  if (available_memory_bytes() >= (int64_t(26) << 30)) return;  // below the 26.08 needed: refused for sure
  run = warpnet_cli("trace relu/1 --size 500000000");
  CHECK(run.status != 0);
  CHECK(run.output.find("trace: relu/01_grid_stride at n=500000000 needs at least 26.08 GiB for the emulator's race "
                        "check (12 bytes for each byte of its 1.86 GiB of outputs, its inputs besides); this "
                        "machine has ") != std::string::npos);
}
