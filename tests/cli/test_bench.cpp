// `warpnet bench` end to end at a small size. Without a usable GPU (CI: the
// toolkit but no driver) the CPU half must still run and the output and the
// record must say the GPU half was skipped and why; with one, every GPU
// version must be checked and timed.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_run.hpp"
#include "tests/test_support.hpp"

namespace {

using warpnet::test::Run;

Run bench(const std::string& args) { return warpnet::test::warpnet_cli("bench " + args); }

// `warpnet bench <args> --json <scratch folder>/<file>`: the run, which must
// succeed, and the record it wrote.
struct Recorded {
  Run run;
  nlohmann::json record;
};
Recorded bench_recorded(const std::string& args, const std::string& file) {
  const std::string path = (warpnet::test::scratch_dir() / file).string();
  Recorded r{bench(args + " --json " + path), {}};
  INFO(r.run.output);
  REQUIRE(r.run.status == 0);
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "no record at ", path);
  r.record = nlohmann::json::parse(in);
  return r;
}

}  // namespace

TEST_CASE("warpnet bench matmul runs the CPU half and records the GPU half or why it was skipped") {
  const auto [run, rec] =
      bench_recorded("matmul --size 48,40,32,1,0 --runs 3 --budget 0.01 --seed 5 --threads 1", "bench.json");
  INFO(run.output);
  CHECK(run.output.find("cpu warpnet") != std::string::npos);
  CHECK(rec.contains("cpu"));  // machine_record()
  // Which sources the binary came from: scripts/source-hash.sh's 16 hex digits.
  CHECK(rec["sources"]["hash"].get<std::string>().size() == 16);
  CHECK(!rec["sources"]["commit"].get<std::string>().empty());
  CHECK(rec["seed"] == 5);
  REQUIRE(rec["ops"].size() == 1);
  const nlohmann::json& op = rec["ops"][0];
  CHECK(op["sizes"] == nlohmann::json({48, 40, 32, 1, 0}));
  CHECK(op["relative_error_bound"].get<double>() == 32 * std::ldexp(1.0, -23));  // K·2^-23, K = 32
  // The op's count, which the CPU rows' TFLOP/s divide, with or without GPU kernels in the build.
  CHECK(op["flops"].get<double>() == 2.0 * 48 * 40 * 32);
  CHECK(run.output.find("(0.0001229 GFLOP)") != std::string::npos);
  CHECK(op["cpu"]["rows"][0]["timing"]["median_ms"].get<double>() > 0);
  CHECK(rec["gpu"]["usable"].get<bool>() == warpnet::test::gpu_present());
  if (!rec["gpu"]["usable"].get<bool>()) {
    CHECK(run.output.find("GPU part SKIPPED: no usable GPU") != std::string::npos);
    CHECK(op["gpu"]["skipped"].get<std::string>().find("no usable GPU") == 0);
  } else {
    CHECK(op["gpu"]["kernels"].size() > 1);  // version 0 and warpnet's
    for (const auto& k : op["gpu"]["kernels"]) {
      CHECK(k["status"] == "ok");
      CHECK(k["verify"]["reference"].get<std::string>().find("CPU") == 0);
    }
  }
}

// On two threads OpenBLAS's SGEMM runs on its worker threads, whose stacks
// must hold the emulator's static TLS beside the kernel's frames: linked,
// the library started them before warpnet could grow the default stack, and
// this run died of SIGSEGV (src/cli/openblas_peer.hpp).
TEST_CASE("warpnet bench matmul runs the CPU peer on two threads") {
  const auto [run, record] =
      bench_recorded("matmul --size 130,128,128 --runs 2 --budget 0.01 --threads 2", "bench-two-threads.json");
  INFO(run.output);
  const nlohmann::json op = record["ops"][0];
  const nlohmann::json& cpu = op["cpu"];
  CHECK(cpu["threads"] == 2);
  if (cpu.contains("peer")) {  // a build without OpenBLAS says so
    CHECK(cpu["peer"].get<std::string>().find("OpenBLAS") != std::string::npos);
  } else {
    REQUIRE(cpu["rows"].size() == 2);
    CHECK(cpu["rows"][1]["library"] == "openblas");
    // Each library's product is within the bench's bound of the exact one,
    // so the two within twice it.
    const double bound = op["relative_error_bound"].get<double>();
    CHECK(cpu["rows"][1]["relative_difference_from_warpnet"].get<double>() < 2 * bound);
    CHECK(cpu["rows"][1]["timing"]["median_ms"].get<double>() > 0);
  }
}

TEST_CASE("warpnet bench --kernels in a build without GPU kernels says so before anything else") {
  const Run run = bench("matmul --kernels matmul/3 --size 4,4,4 --no-cpu");
  INFO(run.output);
  const std::string refusal = "this build has no GPU kernels";
  if (warpnet::test::built_with_toolkit()) {  // matmul/3 is there, with or without a GPU to run it
    CHECK(run.output.find(refusal) == std::string::npos);
    if (warpnet::test::gpu_present()) CHECK(run.status == 0);
    else CHECK(run.output.find("GPU part SKIPPED: no usable GPU") != std::string::npos);
    return;
  }
  CHECK(run.status != 0);
  CHECK(run.output.starts_with("warpnet: error: bench --kernels matmul/3: " + refusal +
                               " (it was built without the CUDA toolkit), so --kernels selects nothing"));
}

TEST_CASE("warpnet bench refuses a malformed size and an unknown op") {
  CHECK(bench("matmul --size 4,x --no-cpu").status != 0);
  const Run unknown = bench("convolution --no-cpu");
  CHECK(unknown.status != 0);
  CHECK(unknown.output.find("'convolution' is neither an op, the start of one, nor train") != std::string::npos);
  // '' is the start of every op's name: it ran them all.
  const Run empty = bench("matmul '' --no-cpu");
  CHECK(empty.status != 0);
  CHECK(empty.output.find("bench: an empty op name ('') names no op; to run every op, name none") != std::string::npos);
}

TEST_CASE("warpnet bench takes one --size for several ops whose sizes are named alike, and refuses it for others") {
  // conv2d_dgrad named twice, once by name and once again: each op runs once.
  const auto [run, rec] = bench_recorded(
      "conv2d_dgrad conv2d_wgrad conv2d_dgrad --size 2,3,9,9,4,3,3,1,1,1 --runs 3 --budget 0.01 --threads 1",
      "bench-conv-family.json");
  INFO(run.output);
  REQUIRE(rec["ops"].size() == 2);
  std::set<std::string> ops;
  for (const auto& op : rec["ops"]) {
    ops.insert(op["op"].get<std::string>());
    CHECK(op["sizes"] == nlohmann::json({2, 3, 9, 9, 4, 3, 3, 1, 1, 1}));
  }
  CHECK(ops == std::set<std::string>{"conv2d_dgrad", "conv2d_wgrad"});
  const Run mixed = bench("matmul softmax --size 4,4,4 --no-cpu");
  CHECK(mixed.status != 0);
  CHECK(mixed.output.find("--size applies to ops whose sizes are named alike") != std::string::npos);
}

TEST_CASE("warpnet bench refuses an option that none of the targets it runs reads, instead of ignoring it") {
  const Run batch = bench("matmul --batch 256 --size 4,4,4 --no-cpu");
  INFO(batch.output);
  CHECK(batch.status != 0);
  CHECK(batch.output.find("bench --batch: only train reads it, and this run has none of them") != std::string::npos);
  const Run kernels = bench("train --kernels 3");
  INFO(kernels.output);
  CHECK(kernels.status != 0);
  CHECK(kernels.output.find("bench --kernels: only the ops (matmul, conv2d, ...) read it") != std::string::npos);
  const Run seed = bench("allreduce --seed 7");
  INFO(seed.output);
  CHECK(seed.status != 0);
  CHECK(seed.output.find("bench --seed: only the ops (matmul, conv2d, ...), precision and train read it") !=
        std::string::npos);
  // Read by one of the targets run: taken (a CPU-only run, to stay quick).
  const Run taken = bench("matmul --size 5,6,7 --seed 7 --runs 3 --budget 0.01 --threads 1");
  INFO(taken.output);
  CHECK(taken.status == 0);
}

TEST_CASE("warpnet bench takes the start of op names for a family of ops") {
  const Run run = bench("sum --size 4,4 --runs 3 --budget 0.01 --threads 1");
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK(run.output.find("sum_rows N=4 C=4") != std::string::npos);
}

TEST_CASE("warpnet bench fails, saying why, when it measured nothing") {
  const Run run = bench("sum --size 4,4 --no-cpu");
  INFO(run.output);
  if (warpnet::test::gpu_present()) {
    CHECK(run.status == 0);  // a GPU measured the GPU part
    CHECK(run.output.find("GPU part SKIPPED") == std::string::npos);
  } else {
    CHECK(run.status != 0);
    CHECK(run.output.find("nothing was measured: the GPU part was skipped") != std::string::npos);
    CHECK(run.output.find("(--no-cpu)") != std::string::npos);
  }
}

TEST_CASE("warpnet bench train times training on the CPU and records the GPU rate or why it was skipped") {
  // Two batch sizes: one record entry each, in the order given.
  const auto [run, rec] = bench_recorded("train --images 96 --batch 32,48 --threads 1 --seed 3", "bench-train.json");
  INFO(run.output);
  REQUIRE(rec["ops"].size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const nlohmann::json& op = rec["ops"][i];
    CHECK(op["op"] == "train");
    CHECK(op["model"] == "lenet5");
    CHECK(op["batch_size"] == (i == 0 ? 32 : 48));
    CHECK(op["cpu"]["images_per_second"].get<double>() > 0);
    CHECK(op["cpu"]["images"] == 96);
    // Epochs of 96 images last milliseconds: each timing is a group of
    // epochs sized from the first run's to last about a second (how long it
    // then takes is the machine's business, not asserted here).
    const int group = op["cpu"]["epochs_per_timing"].get<int>();
    CHECK(group > 1);
    CHECK(op["cpu"]["images_per_second_of_each_epoch"].size() == 3);
    CHECK(op["cpu"]["note"].get<std::string>().find(warpnet::cat("is a group of ", group, " epochs")) !=
          std::string::npos);
    if (!rec["gpu"]["usable"].get<bool>()) {
      CHECK(op["gpu"]["skipped"].get<std::string>().find("no usable GPU") == 0);
      CHECK_FALSE(op.contains("gpu_speedup_over_cpu"));
    } else {
      CHECK(op["gpu"]["images_per_second"].get<double>() > 0);
      CHECK(op["gpu_speedup_over_cpu"].get<double>() > 0);
    }
  }
}

TEST_CASE("warpnet bench train refuses an epoch smaller than one batch, before timing anything") {
  const Run run = bench("train --images 10 --batch 64 --threads 1");
  CHECK(run.status != 0);
  CHECK(run.output.find("bench train: --images 10 is less than one batch of 64") != std::string::npos);
  CHECK(run.output.find("images/s") == std::string::npos);
}

TEST_CASE("warpnet bench precision prints every format's row and writes the precision record") {
  const auto [run, rec] =
      bench_recorded("precision --size 64,48,40 --runs 2 --budget 0.01 --seed 3 --threads 1", "bench-precision.json");
  INFO(run.output);
  CHECK(run.output.find("rel. Frob.") != std::string::npos);
  CHECK(rec["benchmark"] == "warpnet bench precision");
  CHECK(rec.contains("cpu"));  // the common header: machine_record()
  CHECK(rec.contains("date"));
  CHECK(rec["seed"] == 3);
  CHECK(rec.contains("ratios"));
  std::set<std::string> cpu_formats, backends;
  std::map<std::string, double> cpu_error;
  for (const nlohmann::json& r : rec["precision"]) {
    for (const char* field : {"precision", "backend", "kernel", "M", "N", "K", "ms", "tflops", "rel_frobenius", "max_ulps",
                              "input_bytes"})
      CHECK_MESSAGE(r.contains(field), field);
    CHECK(r["M"] == 64);
    CHECK(r["K"] == 40);
    backends.insert(r["backend"].get<std::string>());
    if (r["backend"] == "cpu") {
      cpu_formats.insert(r["precision"].get<std::string>());
      cpu_error[r["precision"].get<std::string>()] = r["rel_frobenius"].get<double>();
    }
  }
  CHECK(cpu_formats == std::set<std::string>{"fp32", "tf32", "bf16", "fp16", "e4m3", "e5m2", "e2m1"});
  // The error follows the significand: fp32's within its K·2^-24 bound; tf32
  // and fp16 (10 bits) below bf16 (7), below e4m3 (3), below e5m2 (2).
  CHECK(cpu_error["fp32"] < 40 * std::ldexp(1.0, -24));
  CHECK(cpu_error["fp32"] < cpu_error["tf32"]);
  CHECK(cpu_error["fp32"] < cpu_error["fp16"]);
  CHECK(cpu_error["tf32"] < cpu_error["bf16"]);
  CHECK(cpu_error["fp16"] < cpu_error["bf16"]);
  CHECK(cpu_error["bf16"] < cpu_error["e4m3"]);
  CHECK(cpu_error["e4m3"] < cpu_error["e5m2"]);
  CHECK(backends.count("emu") == 1);
  CHECK(backends.count("cuda") == (rec["gpu"]["usable"].get<bool>() ? 1u : 0u));
}

TEST_CASE("warpnet bench precision --trans-b runs and records the layout with B stored (N,K)") {
  const auto [run, rec] = bench_recorded(
      "precision --size 64,48,40 --trans-b --precisions bf16,e4m3 --runs 2 --budget 0.01 --threads 1",
      "bench-precision-tn.json");
  INFO(run.output);
  CHECK(rec["layout"].get<std::string>().find("B stored (N,K)") != std::string::npos);
  std::set<std::string> seen;
  for (const nlohmann::json& r : rec["precision"]) {
    CHECK(r["ok"] == true);
    seen.insert(r["backend"].get<std::string>() + " " + r["precision"].get<std::string>());
  }
  CHECK(seen.count("cpu bf16") == 1);
  CHECK(seen.count("emu e4m3") == 1);  // the fp8 tensor-core versions, in their native layout
}

TEST_CASE("warpnet bench precision refuses an unknown precision, a size that is not M,N,K, and huge sizes") {
  const Run unknown = bench("precision --precisions bf16,fp7 --size 8,8,8");
  CHECK(unknown.status != 0);
  CHECK(unknown.output.find("unknown precision 'fp7'") != std::string::npos);
  const Run size = bench("precision --size 64,48");
  CHECK(size.status != 0);
  CHECK(size.output.find("--size is M,N,K") != std::string::npos);
  // The emulator would take minutes: refused before any work, naming the way out.
  const Run large = bench("precision --size 2048,2048,2048");
  CHECK(large.status != 0);
  CHECK(large.output.find("too large for the emulator") != std::string::npos);
  CHECK(large.output.find("--backends cpu,cuda") != std::string::npos);
  // The CPU rows at 20000^3: hours, refused likewise.
  const Run huge = bench("precision --size 20000,20000,20000 --backends cpu");
  CHECK(huge.status != 0);
  CHECK(huge.output.find("20000x20000x20000 is too large for the CPU rows") != std::string::npos);
}
