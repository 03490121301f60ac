// Checkpoints: round trip, resume equals an uninterrupted run, corruption and
// mismatches rejected with errors that name the file and the fault.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include "core/atomic_file.hpp"
#include "cpu/ops.hpp"
#include "datasets/synthetic.hpp"
#include "nn/checkpoint.hpp"
#include "nn/optim.hpp"
#include "nn/trainer.hpp"
#include "tests/test_support.hpp"
#include "tests/thread_count_scope.hpp"

using namespace warpnet;

namespace {

nn::TrainOptions small_run(const std::string& checkpoint, int epochs) {
  nn::TrainOptions o;
  o.model = "mlp";
  o.epochs = epochs;
  o.batch_size = 16;
  o.lr = 0.01;
  o.seed = 9;
  o.checkpoint = checkpoint;
  o.resume = true;
  return o;
}

std::vector<float> weights_of(nn::Module& model) {
  std::vector<float> w;
  for (nn::Parameter* p : model.parameters())
    for (int64_t i = 0; i < p->var.value().numel(); ++i) w.push_back(p->var.value().data<float>()[i]);
  return w;
}

// Checkpoint files made by hand, for the layouts and faults no writer makes.
struct RawBody {
  std::string bytes;
  template <class T>
  void put(const T& value) {
    bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put_str(const std::string& s) {
    put(static_cast<uint32_t>(s.size()));
    bytes += s;
  }
};
// A body's fields before its tensors: an MLP written by no optimizer, seed 9.
RawBody mlp_position(int64_t epoch, int64_t steps) {
  RawBody body;
  body.put_str("mlp");
  body.put_str("");  // optimizer
  body.put(epoch);
  body.put(steps);
  body.put(uint64_t{9});  // seed
  return body;
}
// The header (magic, version, body size, CRC-32) and the body.
std::string raw_checkpoint(uint32_t version, const RawBody& body) {
  std::string file = "WARPNETC";
  const uint32_t crc =
      static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(body.bytes.data()), uInt(body.bytes.size())));
  const uint64_t body_bytes = body.bytes.size();
  file.append(reinterpret_cast<const char*>(&version), 4);
  file.append(reinterpret_cast<const char*>(&body_bytes), 8);
  file.append(reinterpret_cast<const char*>(&crc), 4);
  return file + body.bytes;
}

std::string fresh_path(const std::string& name) {
  auto path = test::scratch_dir() / name;
  std::filesystem::remove(path);
  return path.string();
}

}  // namespace

TEST_CASE("a checkpoint round-trips weights and optimizer state") {
  const test::ThreadCountScope thread_count(1);
  const data::Dataset train = data::make_blobs(200, 3, 2, 4);
  const std::string path = fresh_path("roundtrip.ckpt");
  nn::Trainer a(small_run(path, 1), train, data::Dataset{});
  a.run();
  nn::Checkpoint ck = nn::load_checkpoint(path);
  CHECK(ck.model == "mlp");
  CHECK(ck.optimizer == "adam");
  CHECK(ck.epoch == 1);
  CHECK(ck.steps == 13);  // ⌈200/16⌉ batches
  auto model = nn::make_model("mlp", {2}, 3, 123);
  auto adam = nn::make_optimizer("adam", model->parameters(), 0.01);
  nn::restore(ck, *model, adam.get());
  CHECK(weights_of(*model) == weights_of(a.model()));
  // Adam's moments and step count, bit for bit: a resumed run's next step reads them.
  CHECK(adam->steps() == a.optimizer().steps());
  const std::map<std::string, Tensor> want = a.optimizer().state(), got = adam->state();
  REQUIRE(got.size() == want.size());
  CHECK(want.size() == 2 * model->parameters().size());  // m and v for each parameter
  for (const auto& [name, tensor] : want) {
    INFO(name);
    REQUIRE(got.count(name) == 1);
    const Tensor& g = got.at(name);
    REQUIRE(g.shape() == tensor.shape());
    for (int64_t i = 0; i < tensor.numel(); ++i) REQUIRE(g.item(i) == tensor.item(i));
  }
}

TEST_CASE("training resumed from a checkpoint ends where an uninterrupted run ends") {
  const test::ThreadCountScope thread_count(1);
  const data::Dataset train = data::make_blobs(200, 3, 2, 4);
  nn::Trainer straight(small_run(fresh_path("straight.ckpt"), 3), train, data::Dataset{});
  straight.run();
  const std::string path = fresh_path("resumed.ckpt");
  nn::Trainer first(small_run(path, 1), train, data::Dataset{});
  first.run();
  nn::Trainer second(small_run(path, 3), train, data::Dataset{});
  CHECK(second.first_epoch() == 2);
  second.run();
  CHECK(weights_of(second.model()) == weights_of(straight.model()));
}

TEST_CASE("a resumed model with dropout draws the masks the uninterrupted run drew") {
  // mini-AlexNet's two dropout layers: each step's masks come from the
  // step's number, not from a generator the checkpoint would have to hold.
  const test::ThreadCountScope thread_count(1);
  const data::Dataset train = data::make_squares(48, 10, 28, 3);
  const auto run = [](const std::string& path, int epochs) {
    nn::TrainOptions o = small_run(path, epochs);
    o.model = "alexnet";
    return o;
  };
  nn::Trainer straight(run(fresh_path("straight_dropout.ckpt"), 2), train, data::Dataset{});
  const std::vector<nn::EpochStats> whole = straight.run();
  const std::string path = fresh_path("resumed_dropout.ckpt");
  nn::Trainer(run(path, 1), train, data::Dataset{}).run();
  nn::Trainer second(run(path, 2), train, data::Dataset{});
  const std::vector<nn::EpochStats> rest = second.run();
  REQUIRE(rest.size() == 1);
  CHECK(rest[0].train_loss == whole.at(1).train_loss);
  CHECK(weights_of(second.model()) == weights_of(straight.model()));
}

TEST_CASE("damaged or mismatched checkpoints are rejected with a clear error") {
  const test::ThreadCountScope thread_count(1);
  const data::Dataset train = data::make_blobs(50, 3, 2, 4);
  const std::string path = fresh_path("good.ckpt");
  nn::Trainer t(small_run(path, 1), train, data::Dataset{});
  t.run();
  const std::string bytes = read_file(path);

  const std::string flipped = fresh_path("flipped.ckpt");
  std::string damaged = bytes;
  damaged[damaged.size() / 2] ^= 0x40;
  write_file_atomically(flipped, damaged);
  CHECK(test::error_of([&] { nn::load_checkpoint(flipped); }) ==
        flipped + ": checkpoint is corrupted (CRC-32 mismatch)");

  const std::string truncated = fresh_path("truncated.ckpt");
  write_file_atomically(truncated, bytes.substr(0, bytes.size() - 10));
  CHECK(test::error_of([&] { nn::load_checkpoint(truncated); })
            .starts_with(truncated + ": truncated or padded checkpoint: header says"));

  // Cut inside the header: a checkpoint cut short, not another format.
  for (const size_t kept : {size_t(0), size_t(5), size_t(10)}) {
    const std::string cut = fresh_path("cut.ckpt");
    write_file_atomically(cut, bytes.substr(0, kept));
    CHECK(test::error_of([&] { nn::load_checkpoint(cut); }) ==
          cat(cut, ": truncated: ", kept, " bytes, shorter than a checkpoint's 24-byte header"));
  }

  const std::string wrong = fresh_path("wrong.ckpt");
  write_file_atomically(wrong, "not a checkpoint at all, just text");
  CHECK(test::error_of([&] { nn::load_checkpoint(wrong); }) == wrong + ": not a warpnet checkpoint (bad magic)");

  CHECK(test::error_of([&] { nn::load_checkpoint(fresh_path("absent.ckpt")); }).ends_with(": no such checkpoint file"));

  // Counts no run reaches (a forged or damaged file with a valid CRC): an
  // epoch past int once wrapped to a negative start and trained for ever.
  for (const int64_t epoch : {int64_t(-3), int64_t(1) << 31}) {
    nn::Checkpoint forged = nn::load_checkpoint(path);
    forged.epoch = epoch;
    const std::string file = fresh_path("forged_epoch.ckpt");
    nn::save_checkpoint(file, forged);
    CHECK(test::error_of([&] { nn::load_checkpoint(file); }) ==
          cat(file, ": checkpoint says ", epoch, " epochs were completed (expected 0 to 1000000)"));
  }
  // A step count past 2^63 - 1 once wrapped negative on the next step (Adam's loss became NaN).
  for (const int64_t steps : {int64_t(-5), std::numeric_limits<int64_t>::max()}) {
    nn::Checkpoint forged = nn::load_checkpoint(path);
    forged.steps = steps;
    const std::string file = fresh_path("forged_steps.ckpt");
    nn::save_checkpoint(file, forged);
    CHECK(test::error_of([&] { nn::load_checkpoint(file); }) ==
          cat(file, ": checkpoint says ", steps, " optimizer steps were taken (expected 0 to 2^53)"));
  }

  // Weights of another shape: an MLP for 5 classes cannot take 3-class weights.
  nn::Checkpoint ck = nn::load_checkpoint(path);
  auto other = nn::make_model("mlp", {2}, 5, 1);
  CHECK(test::error_of([&] { nn::restore(ck, *other, nullptr); }) ==
        "checkpoint: fc3.weight is f32 (3,64) in the file but f32 (5,64) in the model");
  // No temporary files are left beside the checkpoint.
  for (const auto& entry : std::filesystem::directory_iterator(test::scratch_dir()))
    CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
}

TEST_CASE("a checkpoint whose values no run writes is refused, naming the tensor") {
  // Each file passes its CRC: a run that diverged, or a forged file.
  const test::ThreadCountScope thread_count(1);
  const data::Dataset train = data::make_blobs(50, 3, 2, 4);
  const std::string path = fresh_path("values.ckpt");
  nn::Trainer(small_run(path, 1), train, data::Dataset{}).run();
  const auto resume_from = [&](const nn::Checkpoint& forged) {
    const std::string file = fresh_path("forged_values.ckpt");
    nn::save_checkpoint(file, forged);
    nn::TrainOptions o = small_run(file, 2);
    return test::error_of([&] { nn::Trainer t(o, train, data::Dataset{}); });
  };
  const auto set = [](nn::Checkpoint& ck, const std::string& key, int64_t i, double value) {
    Tensor& t = ck.tensors.at(key);
    if (t.dtype() == DType::f64) t.data<double>()[i] = value;
    else t.data<float>()[i] = float(value);
  };
  const std::string file = test::scratch_dir() / "forged_values.ckpt";

  nn::Checkpoint nan_weight = nn::load_checkpoint(path);
  set(nan_weight, "param/fc1.weight", 5, std::nan(""));
  const std::string why = " (saved by a run that diverged, or a damaged file)";
  CHECK(resume_from(nan_weight) == file + ": checkpoint: 'param/fc1.weight' holds nan at element 5" + why);

  nn::Checkpoint inf_moment = nn::load_checkpoint(path);
  set(inf_moment, "optim/fc3.bias/m", 1, INFINITY);
  CHECK(resume_from(inf_moment) == file + ": checkpoint: 'optim/fc3.bias/m' holds inf at element 1" + why);

  nn::Checkpoint negative_v = nn::load_checkpoint(path);
  set(negative_v, "optim/fc1.bias/v", 2, -0.25);
  CHECK(resume_from(negative_v) == file + ": optimizer: state 'fc1.bias/v' (Adam's mean of squared gradients) is "
                                          "-0.25 at element 2; it cannot be negative");

  nn::Checkpoint extra_weight = nn::load_checkpoint(path);
  extra_weight.tensors["param/fc9.weight"] = Tensor::zeros({2, 2});
  CHECK(resume_from(extra_weight) == file + ": checkpoint: 'param/fc9.weight' matches nothing in the model's "
                                            "parameters (saved from model 'mlp', optimizer 'adam')");

  nn::Checkpoint extra_state = nn::load_checkpoint(path);
  extra_state.tensors["optim/fc1.weight/velocity"] = Tensor::zeros({2, 2});
  CHECK(resume_from(extra_state) == file + ": checkpoint: 'optim/fc1.weight/velocity' matches nothing in the adam "
                                           "optimizer's state (saved from model 'mlp', optimizer 'adam')");

  nn::Checkpoint nan_lr = nn::load_checkpoint(path);
  set(nan_lr, "train/lr", 0, std::nan(""));
  CHECK(resume_from(nan_lr) == file + ": setting 'train/lr' is nan, which no run sets (damaged or forged)");

  // The file as written resumes.
  CHECK(resume_from(nn::load_checkpoint(path)) == "(no error)");
}

TEST_CASE("resuming names the checkpoint when the run differs from the one that wrote it") {
  const test::ThreadCountScope thread_count(1);
  const data::Dataset train = data::make_blobs(50, 3, 2, 4);
  const std::string path = fresh_path("mismatch.ckpt");
  nn::Trainer(small_run(path, 1), train, data::Dataset{}).run();
  nn::TrainOptions seed = small_run(path, 2);
  seed.seed = 10;  // other batches than the uninterrupted run's
  CHECK(test::error_of([&] { nn::Trainer t(seed, train, data::Dataset{}); }) ==
        path + ": written by a run with --seed 9, resumed with --seed 10 (resume with --seed 9)");
  nn::TrainOptions sgd = small_run(path, 2);
  sgd.optimizer = "sgd";
  CHECK(test::error_of([&] { nn::Trainer t(sgd, train, data::Dataset{}); }) ==
        path + ": checkpoint: saved with optimizer 'adam', resuming with 'sgd'");
  // Another training set (as --limit gives): its epochs are not the checkpoint's.
  const std::string advice = " (resume with the same --data, --data-dir and --limit)";
  const data::Dataset fewer = data::head(train, 40);
  const std::string fewer_error =
      test::error_of([&] { nn::Trainer t(small_run(path, 2), fewer, data::Dataset{}); });
  CHECK(fewer_error.starts_with(path + ": written by a run on blobs, 50 examples, contents "));
  CHECK(fewer_error.find(", resumed on blobs[:40], 40 examples, contents ") != std::string::npos);
  CHECK(fewer_error.ends_with(advice));
  // The same name and size but other examples (as another --data-dir gives).
  const data::Dataset other = data::make_blobs(50, 3, 2, 5);
  REQUIRE(other.name == train.name);
  const std::string other_error =
      test::error_of([&] { nn::Trainer t(small_run(path, 2), other, data::Dataset{}); });
  CHECK(other_error.starts_with(path + ": written by a run on blobs, 50 examples, contents "));
  CHECK(other_error.find(", resumed on blobs, 50 examples, contents ") != std::string::npos);
  CHECK(other_error.ends_with(advice));
  // A file from before the contents were recorded is checked on name and size.
  nn::Checkpoint unfingerprinted = nn::load_checkpoint(path);
  unfingerprinted.data = "blobs, 50 examples";
  const std::string old_path = fresh_path("unfingerprinted.ckpt");
  nn::save_checkpoint(old_path, unfingerprinted);
  CHECK(test::error_of([&] { nn::Trainer t(small_run(old_path, 2), other, data::Dataset{}); }) == "(no error)");
  const std::string old_error =
      test::error_of([&] { nn::Trainer t(small_run(old_path, 2), fewer, data::Dataset{}); });
  CHECK(old_error.starts_with(old_path + ": written by a run on blobs, 50 examples, resumed on blobs[:40], 40 "
                                         "examples, contents "));
  CHECK(old_error.ends_with(advice));
  // Another batch size: other batches, other dropout masks.
  nn::TrainOptions batch = small_run(path, 2);
  batch.batch_size = 8;
  CHECK(test::error_of([&] { nn::Trainer t(batch, train, data::Dataset{}); }) ==
        path + ": written by a run with --batch-size 16, resumed with --batch-size 8 (resume with --batch-size 16: "
               "each epoch's batches and dropout masks follow from it)");
  // Another learning rate is a choice: taken, and said.
  nn::TrainOptions lr = small_run(path, 2);
  lr.lr = 0.001;
  const nn::Trainer slower(lr, train, data::Dataset{});
  REQUIRE(slower.changed_on_resume().size() == 1);
  CHECK(slower.changed_on_resume()[0] == "--lr 0.001 (the checkpoint's run: 0.01)");
  CHECK(nn::Trainer(small_run(path, 2), train, data::Dataset{}).changed_on_resume().empty());
  // Another thread count: taken, and said, since the last bits then differ.
  {
    const test::ThreadCountScope two(2);
    const nn::Trainer more_threads(small_run(path, 2), train, data::Dataset{});
    REQUIRE(more_threads.changed_on_resume().size() == 1);
    CHECK(more_threads.changed_on_resume()[0] ==
          "--threads 2 (the checkpoint's run: 1): the sums split differently, so the last bits differ from either "
          "uninterrupted run's");
  }
  // (Another device: tests/cli, whose binary links the emulator's kernels.)

  // SGD's momentum and weight decay are recorded too (Adam takes neither).
  const std::string sgd_path = fresh_path("sgd_settings.ckpt");
  nn::TrainOptions with_sgd = small_run(sgd_path, 1);
  with_sgd.optimizer = "sgd";
  with_sgd.momentum = 0.8;
  with_sgd.weight_decay = 0.01;
  nn::Trainer(with_sgd, train, data::Dataset{}).run();
  const nn::Checkpoint ck = nn::load_checkpoint(sgd_path);
  const auto setting = [&](const std::string& name) { return ck.tensors.at("train/" + name).item(0); };
  CHECK(setting("batch-size") == 16);
  CHECK(setting("lr") == 0.01);
  CHECK(setting("momentum") == 0.8);
  CHECK(setting("weight-decay") == 0.01);
  CHECK(setting("threads") == 1);
  CHECK(setting("device") == 0);  // Device::cpu
  with_sgd.epochs = 2;
  with_sgd.weight_decay = 0;
  const nn::Trainer resumed(with_sgd, train, data::Dataset{});
  REQUIRE(resumed.changed_on_resume().size() == 1);
  CHECK(resumed.changed_on_resume()[0] == "--weight-decay 0 (the checkpoint's run: 0.01)");
}

TEST_CASE("a version 1 checkpoint, which records no data set, still loads") {
  RawBody body = mlp_position(2, 26);
  body.put(uint32_t{0});  // no tensors
  const std::string path = fresh_path("version1.ckpt");
  write_file_atomically(path, raw_checkpoint(1, body));
  const nn::Checkpoint ck = nn::load_checkpoint(path);
  CHECK(ck.model == "mlp");
  CHECK(ck.epoch == 2);
  CHECK(ck.steps == 26);
  CHECK(ck.seed == 9);
  CHECK(ck.data.empty());
}

TEST_CASE("a checkpoint at --epochs resumes to nothing to train, and its model is the one evaluated") {
  const test::ThreadCountScope thread_count(1);
  const data::Dataset train = data::make_blobs(200, 3, 2, 4), test = data::make_blobs(60, 3, 2, 5);
  const std::string path = fresh_path("finished.ckpt");
  nn::Trainer first(small_run(path, 2), train, test);
  const std::vector<nn::EpochStats> trained = first.run();
  REQUIRE(trained.size() == 2);
  for (int epochs : {2, 1}) {  // at the checkpoint's epoch, and before it
    nn::Trainer again(small_run(path, epochs), train, test);
    CHECK(again.first_epoch() == 3);
    CHECK(again.run().empty());
    CHECK(weights_of(again.model()) == weights_of(first.model()));
    const nn::EvalResult restored = again.evaluate_test_set();
    CHECK(restored.accuracy == trained.back().test_accuracy);
    CHECK(restored.loss == trained.back().test_loss);
  }
}

TEST_CASE("a run that diverges stops before its checkpoint, and the last one that resumes stays") {
  const test::ThreadCountScope thread_count(1);
  const data::Dataset test = data::make_blobs(60, 3, 2, 5);
  // Epoch 2 resumed at a rate no run survives, each time with every
  // training loss finite. Adam (13 steps an epoch): its second moments
  // overflow to inf first. SGD (one step an epoch, whose loss is taken
  // before its update): the weights it leaves give NaN logits on the test set.
  struct Case {
    std::string optimizer;
    int64_t examples;
    double lr;
    std::string says;
  };
  for (const Case& c : {Case{"adam", 200, 1e10, "after epoch 2 'optim/"},
                        Case{"sgd", 16, 1e30, "the test loss became "}}) {
    INFO(c.optimizer);
    const data::Dataset train = data::make_blobs(c.examples, 3, 2, 4);
    const std::string path = fresh_path("diverged-" + c.optimizer + ".ckpt");
    nn::TrainOptions o = small_run(path, 1);
    o.optimizer = c.optimizer;
    nn::Trainer(o, train, test).run();
    const nn::Checkpoint epoch1 = nn::load_checkpoint(path);
    o.epochs = 2;
    o.lr = c.lr;
    const std::string error = test::error_of([&] { nn::Trainer(o, train, test).run(); });
    INFO(error);
    CHECK(error.starts_with("train: " + c.says));
    CHECK(error.find("after epoch 2") != std::string::npos);
    CHECK(error.ends_with(" too high?); " + path + " keeps the checkpoint of epoch 1"));
    // The file is epoch 1's, untouched, and resumes.
    const nn::Checkpoint kept = nn::load_checkpoint(path);
    CHECK(kept.epoch == 1);
    CHECK(kept.tensors.size() == epoch1.tensors.size());
    for (const auto& [key, t] : epoch1.tensors)
      for (int64_t i = 0; i < t.numel(); ++i) REQUIRE(kept.tensors.at(key).item(i) == t.item(i));
    auto model = nn::make_model("mlp", {2}, 3, 123);
    nn::restore(kept, *model, nn::make_optimizer(c.optimizer, model->parameters(), 0.01).get());
  }
}

TEST_CASE("a forged tensor whose element count times its width wraps to the bytes it claims is refused") {
  // 2^62 floats are 2^64 bytes: as a 64-bit product, 0, the bytes this file claims.
  RawBody body = mlp_position(1, 1);
  body.put_str("");       // data set (version 2)
  body.put(uint32_t{1});  // one tensor
  body.put_str("param/fc1.weight");
  body.put(static_cast<uint8_t>(DType::f32));
  body.put(uint32_t{1});       // rank
  body.put(int64_t{1} << 62);  // its one dimension
  body.put(uint64_t{0});       // bytes
  const std::string path = fresh_path("wrapped.ckpt");
  write_file_atomically(path, raw_checkpoint(2, body));
  CHECK(test::error_of([&] { nn::load_checkpoint(path); }) ==
        path + ": tensor 'param/fc1.weight': tensor: shape (4611686018427387904) of f32 needs more than 2^63 bytes");
}
