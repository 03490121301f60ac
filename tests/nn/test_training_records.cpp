// The committed GPU training records as `warpnet tour` and lesson 08 read
// them: train entries with both rates kept in file-name order, CPU-only and
// unreadable ones passed over (a record with a field of the wrong type
// whole), and the newest record of a model found by its own date, not its
// file name.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "nn/training_records.hpp"
#include "tests/test_support.hpp"

using namespace warpnet;

namespace {

void write(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file);
  out << text;
}

// A record as `warpnet bench train` writes one: the machine's fields, then its train entries.
std::string record(const std::string& date, const std::string& gpu, const std::string& entries) {
  return R"({"date": ")" + date + R"(", "cpu": "Test CPU", "gpu": {"name": ")" + gpu +
         R"(", "usable": true}, "ops": [)" + entries + "]}";
}
std::string entry(const std::string& model, int batch, double cpu, double gpu) {
  return R"({"op": "train", "model": ")" + model + R"(", "batch_size": )" + std::to_string(batch) +
         R"(, "cpu": {"images_per_second": )" + std::to_string(cpu) + R"(, "threads": 2}, "gpu": {"images_per_second": )" +
         std::to_string(gpu) + R"(}, "gpu_speedup_over_cpu": )" + std::to_string(gpu / cpu) + "}";
}

}  // namespace

TEST_CASE("training records: train entries with both rates, in file-name order; the newest of a model by date") {
  const std::filesystem::path dir = test::scratch_dir() / "training-records";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // The newest run sorts between two older ones, so neither the first nor the
  // last file is it; "c-" ran without a GPU; "d-" does not parse.
  write(dir / "a-older.json", record("2026-11-30T08:00:00Z", "GPU Old", entry("lenet5", 64, 80, 1000) + "," +
                                                                         entry("alexnet", 64, 10, 300)));
  write(dir / "b-newest.json", record("2026-12-04T12:00:00Z", "GPU New", entry("lenet5", 64, 100, 1800) + "," +
                                                                          entry("lenet5", 256, 100, 5000)));
  write(dir / "c-cpu-only.json",
        record("2026-12-05T00:00:00Z", "none", R"({"op": "train", "model": "lenet5", "cpu": {"images_per_second": 90},)"
                                               R"( "gpu": {"images_per_second": 0}})"));
  write(dir / "d-garbled.json", "{\"ops\": [");
  write(dir / "e-other-op.json", record("2026-12-06T00:00:00Z", "GPU Other", R"({"op": "matmul", "cpu": {}, "gpu": {}})"));
  write(dir / "f-oldest.json", record("2026-11-29T08:00:00Z", "GPU Oldest", entry("lenet5", 1024, 70, 2000)));
  // A good entry, then a field of the wrong type: the whole record is passed over, not half of it.
  write(dir / "g-wrong-type.json",
        record("2026-12-07T00:00:00Z", "GPU Wrong", entry("lenet5", 64, 100, 900) + "," +
                                                        R"({"op": "train", "model": 5, "cpu": {"images_per_second": 1},)"
                                                        R"( "gpu": {"images_per_second": 2}})"));
  // Both rates but no speed-up: not as `warpnet bench train` writes it, passed over (not read as a ratio of 0).
  write(dir / "h-no-speedup.json",
        record("2026-12-08T00:00:00Z", "GPU Partial", R"({"op": "train", "model": "lenet5", "batch_size": 64,)"
                                                      R"( "cpu": {"images_per_second": 10}, "gpu": {"images_per_second": 20}})"));
  write(dir / "notes.txt", "not a record");
  // A pipe named like a record would block its read for ever: passed over.
  REQUIRE(::mkfifo((dir / "z-pipe.json").c_str(), 0600) == 0);

  const nn::RecordedTrainings recorded = nn::recorded_trainings(dir);
  REQUIRE(recorded.entries.size() == 5);
  CHECK(recorded.cpu_only == 1);
  CHECK(recorded.entries[0].file == "a-older.json");
  CHECK(recorded.entries[1].model == "alexnet");
  CHECK(recorded.entries[3].batch_size == 256);
  CHECK(recorded.entries[4].file == "f-oldest.json");
  const nn::RecordedTraining& newest = recorded.entries[2];
  CHECK(newest.gpu == "GPU New");
  CHECK(newest.cpu == "Test CPU");
  CHECK(newest.date == "2026-12-04T12:00:00Z");
  CHECK(newest.cpu_threads == 2);
  CHECK(newest.cpu_images_per_second == doctest::Approx(100));
  CHECK(newest.gpu_images_per_second == doctest::Approx(1800));
  CHECK(newest.speedup == doctest::Approx(18));

  const std::vector<nn::RecordedTraining> lenet = nn::newest_for_model(recorded, "lenet5");
  REQUIRE(lenet.size() == 2);  // both entries of the newest record, not the older one's
  CHECK(lenet[0].file == "b-newest.json");
  CHECK(lenet[1].batch_size == 256);
  const std::vector<nn::RecordedTraining> alexnet = nn::newest_for_model(recorded, "alexnet");
  REQUIRE(alexnet.size() == 1);
  CHECK(alexnet[0].file == "a-older.json");
  CHECK(nn::newest_for_model(recorded, "mlp").empty());
  CHECK(nn::recorded_trainings(dir / "missing").entries.empty());
}
