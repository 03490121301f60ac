// Data-parallel training, end to end: `mpirun -np 2 warpnet train
// --data-parallel` against one process with the same global batch and seed;
// a checkpoint resumed with a different number of ranks; and ranks that fail
// (an error, an exit, a hang) ending the job, within a time limit, with a
// message that names the rank and what it was doing.
//
// The tolerance (why the per-epoch losses may differ, and by how much).
// Given equal weights at the start of a step, both runs compute every
// example's forward pass and its contribution to each gradient element the
// same way: rows are independent, and the CPU ops accumulate the batch in
// row order (per-image partials for the convolutions' weights, up to 16
// images; the GEMM's K loop for the linear layers). Two things differ:
//   1. the order of the sum over the B rows of the global batch: one process
//      adds rows 0..B-1 in turn; two ranks add their halves and the
//      all-reduce adds the two partial sums. Any order of an n-term sum is
//      within γ_{n-1}·Σ|tᵢ| of the exact sum, γ_n = n·u/(1-n·u) (Higham,
//      Accuracy and Stability of Numerical Algorithms, 2nd ed., §4.2), so the
//      two orders differ by at most 2·γ_{B-1}·Σ|tᵢ| ≈ 2B·u·Σ|tᵢ|;
//   2. the weighting: 1/B in one process, (b_r/B)/b_r on the ranks (the
//      seed of each rank's backward, nn/data_parallel.hpp): at most 3u
//      more, relative.
// With u = 2⁻²⁴, one step's gradient differs by at most (2B+3)·u relative
// (for sums whose Σ|tᵢ| is of the order of |Σtᵢ|). Plain SGD turns that into
// a weight difference lr·Δg per step; to first order (small steps, on which
// the loss falls steadily, as in these short runs) the differences of T
// steps add up, and the loss moves by at most the same relative amount: T·(2B+3)·u.
// SGD momentum μ sums past gradients with weights Σμᵏ ≤ 1/(1-μ): multiply by
// that. The reported loss of a batch is its mean in f32 times its rows, on
// one rank or summed over two: positive terms, (B+1)·u more. So after T
// steps
//     tol = (T·(2B+3)/(1-μ) + B + 1) · u.
// Small odd batches make the test sharp: with B = 3 the shards hold 1 and 2
// rows, and a plain average of the ranks' gradients (Σ g_r / 2 instead of
// Σ (b_r/B)·g_r) moves these losses by 2e-4 to 2e-2 (measured), far beyond
// tol (7e-6 to 5e-5), while the runs themselves agree to about 1e-8.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "tests/dist/dist_support.hpp"
#include "tests/test_support.hpp"

using namespace warpnet;
using namespace warpnet::test;

namespace {

constexpr double kUnitRoundoff = 0x1p-24;  // fp32

// `terms`: the length of the longest sum across the batch that one op
// splits between the ranks: B for the CPU ops, which add per-row (or
// per-image) partials; more for a kernel that sums elements of several
// images in one loop (see the emulator's test).
double tolerance(int64_t steps, int64_t batch, double momentum, int64_t terms = 0) {
  if (terms == 0) terms = batch;
  return (double(steps) * double(2 * terms + 3) / (1.0 - momentum) + double(batch + 1)) * kUnitRoundoff;
}

std::string path_of(const std::string& name) { return (scratch_dir() / name).string(); }

// Trains with `args` (plus --report) on `ranks` ranks (0: one process,
// without --data-parallel) and returns the report.
nlohmann::json train(int ranks, const std::string& args, const std::string& report_name) {
  const std::string report = path_of(report_name);
  const std::string command = ranks == 0 ? cat(warpnet_bin(), " train ", args, " --report ", report)
                                         : cat(mpirun(ranks), warpnet_bin(), " train --data-parallel ", args,
                                               " --report ", report);
  return run_for_json(command, report);
}

// Compares per-epoch train and test losses of two reports: `got` holds each
// of want's epochs from its own first on (a resumed run starts later), and
// no other; `steps_per_epoch` counts optimizer steps for the tolerance, from
// the first epoch of the whole run.
void check_same_losses(const nlohmann::json& want, const nlohmann::json& got, int64_t steps_per_epoch,
                       int64_t batch, double momentum, int64_t terms = 0) {
  REQUIRE(got["epochs"].size() >= 1);
  const int first = got["epochs"][0]["epoch"];
  std::vector<int> want_epochs, got_epochs;
  for (const nlohmann::json& e : want["epochs"])
    if (e["epoch"].get<int>() >= first) want_epochs.push_back(e["epoch"]);
  for (const nlohmann::json& e : got["epochs"]) got_epochs.push_back(e["epoch"]);
  REQUIRE(got_epochs == want_epochs);
  for (const nlohmann::json& g : got["epochs"]) {
    const int epoch = g["epoch"];
    const nlohmann::json* w = nullptr;
    for (const nlohmann::json& e : want["epochs"])
      if (e["epoch"] == epoch) w = &e;
    REQUIRE(w);
    const double tol = tolerance(steps_per_epoch * epoch, batch, momentum, terms);
    for (const char* key : {"train_loss", "test_loss"}) {
      const double a = (*w)[key], b = g[key];
      const double rel = std::abs(a - b) / std::abs(a);
      std::printf("  epoch %d %-10s one process %.9f, ranks %.9f: relative difference %.2e (tolerance %.2e)\n", epoch,
                  key, a, b, rel, tol);
      CHECK(rel <= tol);
    }
    // Accuracies count predictions; a loss this close changes none of them
    // unless a logit tie sits within rounding, which these sets do not have.
    CHECK((*w)["train_accuracy"] == g["train_accuracy"]);
    CHECK((*w)["test_accuracy"] == g["test_accuracy"]);
  }
}

// `ranks` ranks train with `args` as one process does (SGD without momentum),
// and the report says how many ranks trained; `name` prefixes the reports.
void check_ranks_train_as_one(int ranks, const std::string& args, const std::string& name, int64_t steps,
                              int64_t batch) {
  const nlohmann::json many = train(ranks, args, cat(name, "_", ranks, ".json"));
  check_same_losses(train(0, args, cat(name, "_one.json")), many, steps, batch, 0.0);
  CHECK(many["data_parallel"]["ranks"] == ranks);
}

// One step's reported loss against one process's: the forward of the same
// weights, each row computed alike, so only the sum over the B rows differs:
// (B+1)·u (the tolerance at step 0).
void check_same_step_loss(double want, double got, int64_t batch, const std::string& what) {
  const double rel = std::abs(want - got) / std::abs(want), tol = tolerance(0, batch, 0.0);
  std::printf("  %s: one process %.9f, ranks %.9f: relative difference %.2e (tolerance %.2e)\n", what.c_str(), want,
              got, rel, tol);
  CHECK(rel <= tol);
}

// Trains `args` for one epoch on `first` ranks (0: one process), writing a
// checkpoint, and resumes it for the second epoch on `then` ranks; returns
// the second run's report (its one epoch). `name` prefixes the files.
nlohmann::json resumed_for_epoch_2(const std::string& args, int first, int then, const std::string& name) {
  const std::string ck = path_of(name + ".ckpt");
  std::filesystem::remove(ck);
  train(first, args + " --epochs 1 --checkpoint " + ck, name + "_a.json");
  REQUIRE(std::filesystem::exists(ck));
  const nlohmann::json resumed = train(then, args + " --epochs 2 --resume --checkpoint " + ck, name + "_b.json");
  REQUIRE(resumed["epochs"].size() == 1);
  return resumed;
}

}  // namespace

TEST_CASE("2 ranks train an MLP on spirals as one process does with the same global batch") {
  // B = 3: shards of 1 and 2 rows, so the b_r/B weighting matters.
  const std::string small = "--model mlp --data spirals --limit 150 --epochs 2 --batch-size 3 --optimizer sgd "
                            "--momentum 0 --lr 0.05 --seed 5 --threads 1";
  std::printf("MLP, spirals, global batch 3, 50 steps per epoch:\n");
  check_same_losses(train(0, small, "mlp3_one.json"), train(2, small, "mlp3_two.json"), 50, 3, 0.0);
  // A usual batch, odd (31 + 32 rows), whose last batch is smaller (16: 8 + 8).
  const std::string usual = "--model mlp --data spirals --limit 1213 --epochs 1 --batch-size 63 --optimizer sgd "
                            "--momentum 0 --lr 0.05 --seed 6 --threads 1";
  std::printf("MLP, spirals, global batch 63, 20 steps:\n");
  check_ranks_train_as_one(2, usual, "mlp63", 20, 63);
}

TEST_CASE("3 ranks, a ring of three with shards of unequal rows, train as one process does") {
  // B = 7 over 3 ranks (oversubscribed on 2 cores: slow, not wrong); the last
  // batch, 150 mod 7 = 3 rows, gives each rank one.
  const std::string args = "--model mlp --data spirals --limit 150 --epochs 1 --batch-size 7 --optimizer sgd "
                           "--momentum 0 --lr 0.05 --seed 7 --threads 1";
  std::printf("MLP, spirals, global batch 7 over 3 ranks, 22 steps:\n");
  check_ranks_train_as_one(3, args, "mlp7", 22, 7);
}

TEST_CASE("2 ranks train LeNet-5 on squares as one process does") {
  // B = 5: shards of 2 and 3 images; conv weights' gradients are per-image
  // partials summed in image order (at most 16 images: one per group).
  const std::string args = "--model lenet5 --data squares --limit 40 --epochs 2 --batch-size 5 --optimizer sgd "
                           "--momentum 0 --lr 0.05 --seed 3 --threads 1";
  std::printf("LeNet-5, squares, global batch 5, 8 steps per epoch:\n");
  check_same_losses(train(0, args, "lenet_one.json"), train(2, args, "lenet_two.json"), 8, 5, 0.0);
}

TEST_CASE("2 ranks train mini-AlexNet, dropout included, as one process does") {
  // Each rank draws its shard's rows of the whole batch's dropout masks
  // (nn::Dropout); a rank drawing its own masks (or all ranks one) would
  // train on other masks and miss these losses by far more than rounding.
  const std::string args = "--model alexnet --data squares --limit 20 --epochs 1 --batch-size 5 --optimizer sgd "
                           "--momentum 0 --lr 0.05 --seed 3 --threads 1";
  std::printf("mini-AlexNet, squares, global batch 5, 4 steps:\n");
  check_same_losses(train(0, args, "alexnet_one.json"), train(2, args, "alexnet_two.json"), 4, 5, 0.0);
}

TEST_CASE("2 ranks on the emulator's kernels train as one process does") {
  // Parameters on Device::emu: each rank's gradients are device tensors,
  // copied to the host buckets MPI all-reduces (NCCL is for cuda). The
  // kernels split their sums across the batch as the CPU does (a shard's
  // partial sum, then the all-reduce), but some add elements, not per-image
  // partials: the weight gradient of conv1 (implicit GEMM) sums B·24·24
  // products in one loop, so its two orders differ by up to 2·γ over
  // B·576 terms, and the bound takes that length.
  const std::string args = "--model lenet5 --data squares --limit 20 --epochs 1 --batch-size 5 --optimizer sgd "
                           "--momentum 0 --lr 0.05 --seed 4 --threads 1 --device emu";
  std::printf("LeNet-5 on emu, squares, global batch 5, 4 steps:\n");
  const nlohmann::json two = train(2, args, "lenet_emu_two.json");
  check_same_losses(train(0, args, "lenet_emu_one.json"), two, 4, 5, 0.0, 5 * 24 * 24);
  CHECK(two["device"] == "emu");
}

TEST_CASE("one rank with --data-parallel is one process, bit for bit") {
  // Run without mpirun (MPI's singleton start): a weight of 1, an all-reduce
  // that changes nothing, and the layer-by-layer forward with markers must
  // give exactly the plain loop's numbers.
  const std::string args = "--model mlp --data spirals --limit 150 --epochs 2 --batch-size 3 --optimizer adam "
                           "--seed 5 --threads 1";
  const nlohmann::json one = train(0, args, "solo_plain.json");
  const std::string report = path_of("solo_dp.json");
  const nlohmann::json dp =
      run_for_json(cat(warpnet_bin(), " train --data-parallel ", args, " --report ", report), report);
  REQUIRE(dp["epochs"].size() == one["epochs"].size());
  for (size_t e = 0; e < dp["epochs"].size(); ++e) {
    CHECK(dp["epochs"][e]["train_loss"] == one["epochs"][e]["train_loss"]);
    CHECK(dp["epochs"][e]["test_loss"] == one["epochs"][e]["test_loss"]);
  }
}

TEST_CASE("a checkpoint resumes with a different number of ranks") {
  // SGD with momentum: the velocity is optimizer state, which rank 0 reads
  // from the checkpoint and hands to the others (the epoch-end weight check
  // would stop a run whose ranks started from different state).
  const std::string args = "--model mlp --data spirals --limit 150 --batch-size 3 --optimizer sgd --momentum 0.9 "
                           "--lr 0.02 --seed 8 --threads 1";
  const nlohmann::json whole = train(0, args + " --epochs 2", "resume_whole.json");
  SUBCASE("2 ranks, then 1 process") {
    check_same_losses(whole, resumed_for_epoch_2(args, 2, 0, "resume_2to1"), 50, 3, 0.9);
  }
  SUBCASE("1 process, then 2 ranks") {
    check_same_losses(whole, resumed_for_epoch_2(args, 0, 2, "resume_1to2"), 50, 3, 0.9);
  }
}

// ---- mixed precision ------------------------------------------------------------

TEST_CASE("2 ranks run each precision's forward as one process does") {
  // One step: the reported loss is the forward's, before any update. Every
  // row's forward is one process's, so the loss differs only by the sum over
  // rows: (B+1)·u. Ranks that forgot the precision (fp32) missed it by
  // 2.6e-6 (bf16) to 6.6e-4 (fp8) (measured 2026-12-04), beyond that
  // tolerance (3.6e-7).
  const std::string args = "--model lenet5 --data squares --limit 5 --epochs 1 --batch-size 5 --optimizer sgd "
                           "--momentum 0 --lr 0.05 --seed 3 --threads 1 --precision ";
  for (const char* precision : {"tf32", "bf16", "fp16", "fp8"}) {
    const nlohmann::json one = train(0, args + precision, cat("step1_", precision, "_one.json"));
    const nlohmann::json two = train(2, args + precision, cat("step1_", precision, "_two.json"));
    REQUIRE(one["epochs"].size() == 1);
    REQUIRE(two["epochs"].size() == 1);
    check_same_step_loss(one["epochs"][0]["train_loss"], two["epochs"][0]["train_loss"], 5,
                         cat(precision, ", the first step's loss"));
    CHECK(two["precision"]["name"] == precision);
  }
}

TEST_CASE("fp8 on 2 ranks: after a step every rank holds one process's amaxes and scales") {
  // Each rank records the largest |value| of its shard's tensors; then all
  // take the largest (nn::Fp8AmaxSharing). After one step, whose rows each
  // rank computes as one process does, rank 0 reports the whole batch's
  // amax of every operand of every layer, to the bit. Without the sharing
  // it reported its own shard's: 7 of the 15 differed (measured 2026-12-04).
  const std::string args = "--model lenet5 --data squares --limit 5 --epochs 1 --batch-size 5 --optimizer sgd "
                           "--momentum 0 --lr 0.05 --seed 3 --threads 1 --precision fp8";
  const nlohmann::json one = train(0, args, "fp8_amax_one.json");
  const nlohmann::json two = train(2, args, "fp8_amax_two.json");
  REQUIRE(one["precision"]["fp8"].size() == 5);  // conv1, conv2, fc1, fc2, fc3
  CHECK(two["precision"]["fp8"] == one["precision"]["fp8"]);
  // Batches of 1 row: rank 0's shard is always empty, so it records no amax
  // of its own and takes rank 1's, which computes every step as one process
  // does: after 3 steps the same histories, to the bit.
  const std::string single_rows = "--model lenet5 --data squares --limit 3 --epochs 1 --batch-size 1 --optimizer sgd "
                                  "--momentum 0 --lr 0.05 --seed 3 --threads 1 --precision fp8";
  const nlohmann::json one_row = train(0, single_rows, "fp8_amax_row_one.json");
  CHECK(train(2, single_rows, "fp8_amax_row_two.json")["precision"]["fp8"] == one_row["precision"]["fp8"]);
}

TEST_CASE("fp16 on 2 ranks: a step whose gradients overflow is skipped on every rank, and the loss scale halved") {
  // At a loss scale of 2^40 every step overflows fp16 (past 65504): all
  // four are skipped and the scale falls to 2^36, on every rank alike (a
  // rank that stepped alone would fail the epoch-end check that the ranks'
  // weights agree). The weights stay the initial ones.
  const std::string args = "--model lenet5 --data squares --limit 20 --epochs 1 --batch-size 5 --optimizer sgd "
                           "--momentum 0 --lr 0.05 --seed 3 --threads 1 --precision fp16 --loss-scale 1099511627776";
  const nlohmann::json one = train(0, args, "fp16_skip_one.json");
  const nlohmann::json two = train(2, args, "fp16_skip_two.json");
  CHECK(one["precision"]["loss_scale"]["skipped_steps"] == 4);
  CHECK(two["precision"]["loss_scale"] == one["precision"]["loss_scale"]);
  check_same_losses(one, two, 0, 5, 0.0);
}

TEST_CASE("an fp8 checkpoint resumes on 2 ranks with its scales") {
  // One step an epoch: the second epoch's loss is the forward of step 2,
  // from the checkpoint's weights (the uninterrupted run's, bit for bit)
  // and its scales, which rank 0 reads and hands to the others
  // (nn::broadcast_precision_state): one process's loss to (B+1)·u.
  // Without the broadcast rank 1 quantized its shard with scale 1 and the
  // loss moved by 1.6e-4 (measured 2026-12-04).
  const std::string args = "--model lenet5 --data squares --limit 5 --batch-size 5 --optimizer sgd --momentum 0 "
                           "--lr 0.05 --seed 3 --threads 1 --precision fp8";
  const nlohmann::json whole = train(0, args + " --epochs 2", "fp8_resume_whole.json");
  const nlohmann::json resumed = resumed_for_epoch_2(args, 0, 2, "fp8_resume");
  REQUIRE(whole["epochs"].size() == 2);
  check_same_step_loss(whole["epochs"][1]["train_loss"], resumed["epochs"][0]["train_loss"], 5,
                       "fp8, step 2 resumed on 2 ranks");
}

TEST_CASE("ranks started with different options refuse to train together") {
  const std::string common = " train --data-parallel --model mlp --data spirals --limit 60 --epochs 1 --batch-size 6 "
                             "--threads 1 --seed ";
  const Run r = run(cat(mpiexec_path(), " --oversubscribe --allow-run-as-root -np 1 ", warpnet_bin(), common, "1 : -np 1 ",
                        warpnet_bin(), common, "2"),
                    60);
  INFO(r.output);
  CHECK(r.status != 0);
  CHECK(r.output.find("rank 1 differs from rank 0 in --seed: every rank must run the same command") !=
        std::string::npos);
  // A checkpoint on one rank only would pair its after-epoch barrier with
  // another rank's gradient all-reduce: refused before, naming it.
  const std::string checkpoint = (warpnet::test::scratch_dir() / "one_rank.ckpt").string();
  std::filesystem::remove(checkpoint);
  const Run c = run(cat(mpiexec_path(), " --oversubscribe --allow-run-as-root -np 1 ", warpnet_bin(), common,
                        "1 : -np 1 ", warpnet_bin(), common, "1 --checkpoint ", checkpoint),
                    60);
  INFO(c.output);
  CHECK(c.status != 0);
  CHECK(c.output.find("rank 1 differs from rank 0 in --checkpoint (given on some ranks only)") != std::string::npos);
  // Rank 0 writes the report: one named on rank 1 alone would be dropped.
  const std::string report = (warpnet::test::scratch_dir() / "one_rank.json").string();
  const Run rep = run(cat(mpiexec_path(), " --oversubscribe --allow-run-as-root -np 1 ", warpnet_bin(), common,
                          "1 : -np 1 ", warpnet_bin(), common, "1 --report ", report),
                      60);
  INFO(rep.output);
  CHECK(rep.status != 0);
  CHECK(rep.output.find("rank 1's --report differs from rank 0's (rank 0 writes none, rank 1 names one)") !=
        std::string::npos);
}

TEST_CASE("commands that are not data-parallel refuse to run as several mpirun processes, saying what to do") {
  for (const std::string& command : {std::string("train --model mlp --data spirals --limit 60 --threads 1"),
                                     std::string("bench matmul --size 8,8,8"), std::string("info")}) {
    const Run r = run(cat(mpirun(2), warpnet_bin(), " ", command), 60);
    INFO(command, "\n", r.output);
    CHECK(r.status != 0);
    CHECK(r.output.find("started by mpirun as one of 2 processes") != std::string::npos);
    // Before any session names the ranks, the error does.
    CHECK((r.output.find("warpnet: rank 0 of 2: error: ") != std::string::npos ||
           r.output.find("warpnet: rank 1 of 2: error: ") != std::string::npos));
  }
}

// ---- faults ------------------------------------------------------------------

namespace {

const std::string kFaultArgs = "--model mlp --data spirals --limit 600 --epochs 2 --batch-size 8 --optimizer sgd "
                               "--lr 0.05 --seed 5 --threads 1";

Run fault_run(const std::string& kind, const std::string& extra = "") {
  return run(cat(mpirun(2), warpnet_bin(), " train --data-parallel ", kFaultArgs, extra,
                 " --inject-fault rank=1,step=3,kind=", kind),
             90);
}

}  // namespace

TEST_CASE("a rank that fails with an error ends the job, and says which rank and what") {
  const Run r = fault_run("error");
  INFO(r.output);
  std::printf("rank 1 raises an error at step 3: the job ended after %.1f s\n", r.seconds);
  CHECK(r.status != 0);
  CHECK(r.seconds < 30);
  CHECK(r.output.find("warpnet: rank 1 of 2: error: injected fault at step 3") != std::string::npos);
}

TEST_CASE("a rank that exits ends the job; the survivor says what it was doing") {
  const Run r = fault_run("exit");
  INFO(r.output);
  std::printf("rank 1 exits at step 3: the job ended after %.1f s\n", r.seconds);
  CHECK(r.status != 0);
  CHECK(r.seconds < 30);
  CHECK(r.output.find("warpnet: rank 1 of 2: injected fault: exiting at step 3") != std::string::npos);
  // mpirun stops rank 0 (SIGTERM); rank 0 says where it was.
  CHECK(r.output.find("warpnet: rank 0 of 2: ended by SIGTERM during the gradient all-reduce of epoch 1 step 3") !=
        std::string::npos);
}

TEST_CASE("a rank that hangs ends the job after --dist-timeout") {
  const Run r = fault_run("hang", " --dist-timeout 3");
  INFO(r.output);
  std::printf("rank 1 hangs at step 3, timeout 3 s: the job ended after %.1f s\n", r.seconds);
  CHECK(r.status != 0);
  CHECK(r.seconds >= 3);
  CHECK(r.seconds < 30);
  CHECK(r.output.find("warpnet: rank 0 of 2: waited 3 s during the gradient all-reduce of epoch 1 step 3") !=
        std::string::npos);
  // The roll call names the rank that hangs: it sleeps outside MPI, so it
  // cannot answer.
  CHECK(r.output.find("rank 1 did not answer within 2 s") != std::string::npos);
}
