// warpnet bench [OP...] [--size M,N,K[,ta,tb]] [--runs N] [--json FILE] [--kernels LIST]
// mpirun -np N warpnet bench allreduce [--json FILE]   (bench_allreduce.hpp)
// warpnet bench precision [--size M,N,K] [--precisions LIST] [--backends LIST] [--json FILE]   (bench_precision.cpp)
//
// The one benchmark harness (docs: DESIGN "Measuring", STYLE habit 7). For
// each op (every op in the registry when none is named) and each size:
//   CPU  the op's own fp32 CPU path (warpnet's CPU version 0: Eigen for
//        matmul) and, when the build found it, a peer library (OpenBLAS),
//        median of timed runs after a cache flush;
//   GPU  every registered CUDA version, version 0 (cuBLAS) of each input
//        format first. Each is checked before it is timed: at the op's test
//        sizes against the CPU reference, and at the bench size against the
//        CPU (small sizes) or version 0 on the same inputs (large ones), on
//        fresh random inputs with a NaN-poisoned output. Then warm-up, an L2
//        flush before every run, CUDA events, the median of many runs.
// Reported per version: ms, TFLOP/s, % of version 0 of its input format (same
// run), % of the device's peak (basis stated), and the speed-up over the CPU.
// A table on screen; --json writes the record (machine, GPU, every figure).
//
// The GPU half runs in a worker process (`--gpu-worker`, bench_gpu.cpp,
// started by bench_workers.cpp): a kernel that faults leaves the CUDA context
// unusable, one that hangs never returns; either way only that kernel is
// lost, recorded as failed, and a new worker goes on with the rest. Without
// a usable GPU the CPU half (bench_cpu.cpp) still runs and the record says
// why the GPU half was skipped. The ratios and the table: bench_table.cpp.
// This file: the command, its options, and the loop over ops and sizes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <thread>

#include "cli/bench.hpp"
#include "cli/mpirun_guard.hpp"
#include "cli/bench_allreduce.hpp"
#include "cli/commands.hpp"
#include "cli/machine.hpp"
#include "cli/validators.hpp"
#include "core/atomic_file.hpp"
#include "core/build_info.hpp"
#include "core/number_list.hpp"
#include "core/text.hpp"
#include "device/run.hpp"

namespace warpnet::cli {
namespace {

using nlohmann::json;
using bench::Settings;

struct BenchOptions {
  std::vector<std::string> ops;
  std::vector<std::string> sizes;  // each "M,N,K[,ta,tb]"
  std::string json_path, kernels, worker_out;
  bool no_cpu = false;
  Settings settings;
  bench::TrainSettings train;
  std::vector<int64_t> train_batches = {64};
  bench::AllreduceSettings allreduce;
  bench::PrecisionSettings precision;
  bool runs_given = false, budget_given = false;  // allreduce has defaults of its own, which these replace
};

// Every op that has a kernel in any copy, by name.
std::vector<std::string> all_ops() {
  std::set<std::string> names;
  for (device::Copy c : {device::Copy::emulator, device::Copy::cuda})
    for (const device::Kernel* k : device::kernels(c)) names.insert(k->op);
  return {names.begin(), names.end()};
}

// What the names on the command line ask for: "train", an op, or a family
// of ops by prefix ("conv": conv2d, conv2d_dgrad, ...).
std::vector<std::string> expand_names(const std::vector<std::string>& names) {
  const std::vector<std::string> ops = all_ops();
  std::vector<std::string> out;
  for (const std::string& name : names) {
    // '' (a script's unset variable) is the start of every name: it ran every op.
    WN_CHECK(!name.empty(), "bench: an empty op name ('') names no op; to run every op, name none");
    const size_t before = out.size();
    if (name == "train" || std::find(ops.begin(), ops.end(), name) != ops.end()) {
      out.push_back(name);
      continue;
    }
    for (const std::string& op : ops)
      if (op.rfind(name, 0) == 0) out.push_back(op);
    WN_CHECK(out.size() > before, "bench: '", name, "' is neither an op, the start of one, nor train (ops: ",
             join(ops, ", "), ")");
  }
  // Each op once, where it was first asked for: `bench conv conv2d` timed conv2d twice.
  std::vector<std::string> once;
  for (const std::string& op : out)
    if (std::find(once.begin(), once.end(), op) == once.end()) once.push_back(op);
  return once;
}

// The CUDA versions of `op` to run: those --kernels names (all when empty),
// plus version 0 of each input format among them, which the ratios need.
std::vector<const device::Kernel*> gpu_kernels(const std::string& op, const std::string& list) {
  std::vector<const device::Kernel*> all, chosen;
  for (const device::Kernel* k : device::kernels(device::Copy::cuda))
    if (k->op == op) all.push_back(k);
  if (list.empty()) return all;
  std::stringstream in(list);
  for (std::string key; std::getline(in, key, ',');) {
    // A bare version number is this op's (as train --kernels takes "3" for "version 3").
    const bool number = !key.empty() && key.size() <= 4 &&
                        std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
    const device::Kernel& k = device::find_kernel(number ? cat(op, "/", std::stoi(key)) : key, device::Copy::cuda);
    if (k.op == op) chosen.push_back(&k);
  }
  for (const device::Kernel* k : all)
    if (k->version == 0 && std::any_of(chosen.begin(), chosen.end(), [&](auto* c) {
          return c->input_format == k->input_format && c->output_format == k->output_format;
        }))
      chosen.push_back(k);
  std::sort(chosen.begin(), chosen.end(), [](auto* a, auto* b) { return std::tie(a->version, a->name) < std::tie(b->version, b->name); });
  chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  return chosen;
}

// The op's FLOPs at `size`, for every row's TFLOP/s (the CPU's too): any of
// its kernels counts them the same (the direct count; lesson 05 checks the
// conv versions'), so the first GPU one, or, in a build with none (no CUDA
// toolkit), the emulator's.
double op_flops(const std::string& op, const device::Sizes& size, const std::vector<const device::Kernel*>& gpu) {
  if (!gpu.empty()) return gpu.front()->flops(size);
  for (const device::Kernel* k : device::kernels(device::Copy::emulator))
    if (k->op == op) return k->flops(size);
  return 0;
}

// An option that none of the targets run reads would be ignored without a
// word: `bench matmul --batch 256` would time matmul and drop the batch.
// Targets: the registry's ops (all of them when none is named), train,
// precision and allreduce.
void refuse_unread_options(const CLI::App& cmd, const std::vector<std::string>& names) {
  std::set<std::string> run;
  for (const std::string& name : names)
    run.insert(name == "train" || name == "precision" || name == "allreduce" ? name : "ops");
  if (names.empty()) run.insert("ops");
  struct Readers {
    std::vector<const char*> options;
    std::set<std::string> targets;
  };
  const Readers kReaders[] = {
      {{"--size"}, {"ops", "precision"}},
      {{"--kernels", "--no-cpu"}, {"ops"}},
      {{"--timeout"}, {"ops", "allreduce"}},
      {{"--threads", "--seed"}, {"ops", "train", "precision"}},
      {{"--model", "--batch", "--images", "--epoch-seconds"}, {"train"}},
      {{"--precisions", "--backends", "--emu-size", "--gpu-size", "--trans-b"}, {"precision"}},
      {{"--min-bytes", "--max-bytes", "--params", "--grad-bytes", "--compute-ms", "--gpus"}, {"allreduce"}}};
  for (const auto& [options, targets] : kReaders) {
    if (std::any_of(targets.begin(), targets.end(), [&](const std::string& t) { return run.count(t) > 0; })) continue;
    std::string readers;  // "the ops (...), precision and train"
    for (auto t = targets.begin(); t != targets.end(); ++t)
      readers += cat(t == targets.begin() ? "" : std::next(t) == targets.end() ? " and " : ", ",
                     *t == "ops" ? "the ops (matmul, conv2d, ...)" : *t);
    for (const char* option : options)
      WN_CHECK(cmd.count(option) == 0, "bench ", option, ": only ", readers,
               targets.size() == 1 && !targets.count("ops") ? " reads" : " read",
               " it, and this run has none of them, so it would be ignored");
  }
}

void run_bench(BenchOptions& o) {
  Settings& s = o.settings;
  if (!o.worker_out.empty()) {
    WN_CHECK(o.ops.size() == 1 && o.sizes.size() == 1, "bench: a GPU worker takes one op and one --size");
    const device::Op& op = device::op(o.ops[0]);
    std::vector<std::string> ids;
    std::stringstream in(o.kernels);
    for (std::string id; std::getline(in, id, ',');) ids.push_back(id);
    const device::Sizes sizes = device::complete_sizes(op, parse_number_list(o.sizes[0], "bench: --size"));
    const int code = bench::gpu_worker(op.name, sizes, ids, s, o.worker_out);
    std::fflush(stdout);
    std::_Exit(code);  // no static destructors: after a fault or hang they could wait on the GPU
  }
  // Before anything runs or prints: a CPU-only build has no CUDA copy, so
  // every id would be "not registered (cuda): none", the cause printed later.
  WN_CHECK(o.kernels.empty() || !device::kernels(device::Copy::cuda).empty(), "bench --kernels ", o.kernels,
           ": this build has no GPU kernels (it was built without the CUDA toolkit), so --kernels selects nothing; "
           "leave it out to time the CPU alone, or build with the toolkit (cmake --preset default)");
  if (!o.json_path.empty()) prepare_output_file(o.json_path, "bench --json", kJsonFile);
  if (std::find(o.ops.begin(), o.ops.end(), "allreduce") != o.ops.end()) {  // bench_allreduce.cpp, under mpirun
    WN_CHECK(o.ops.size() == 1, "bench: allreduce runs alone: mpirun -np 2 warpnet bench allreduce");
    if (o.runs_given) o.allreduce.max_runs = s.runs, o.allreduce.min_runs = std::min(o.allreduce.min_runs, s.runs);
    if (o.budget_given) o.allreduce.budget_s = s.budget_s;
    o.allreduce.timeout_s = s.timeout_s;
    const json record = bench::bench_allreduce(o.allreduce);
    if (!o.json_path.empty() && !record.is_null()) {
      write_file_atomically(o.json_path, record.dump(1) + "\n");
      std::printf("\nwrote %s\n", o.json_path.c_str());
    }
    return;
  }
  refuse_several_processes("bench", "only `bench allreduce` runs under mpirun; run the others as one process");
  if (std::find(o.ops.begin(), o.ops.end(), "precision") != o.ops.end()) {  // bench_precision.cpp
    WN_CHECK(o.ops.size() == 1, "bench: precision runs alone: warpnet bench precision [--size M,N,K]");
    WN_CHECK(o.sizes.size() <= 1, "bench: precision takes one --size M,N,K");
    o.precision.size = o.sizes.empty() ? "" : o.sizes[0];
    bench::bench_precision(o.precision, s, o.json_path);
    return;
  }
  o.ops = o.ops.empty() ? all_ops() : expand_names(o.ops);
  // `train` is no registry op: its sizes are --batch and --images.
  WN_CHECK(o.sizes.empty() || std::find(o.ops.begin(), o.ops.end(), "train") == o.ops.end(),
           "bench: --size does not apply to train, whose sizes are --batch and --images; bench train apart from the ops");
  // --size with several ops: only ops whose sizes are named alike (conv2d,
  // conv2d_dgrad and conv2d_wgrad all take N,C,H,W,K,R,S,stride,pad,dilation).
  WN_CHECK(o.sizes.empty() || std::all_of(o.ops.begin(), o.ops.end(),
                                          [&](const std::string& name) {
                                            return device::op(name).size_names == device::op(o.ops[0]).size_names;
                                          }),
           "bench: --size applies to ops whose sizes are named alike; name one (warpnet bench matmul --size ...) "
           "or several of one kind (warpnet bench conv2d conv2d_dgrad --size ...)");
  // A timed epoch of less than one batch is one partial batch: its rate
  // would be printed as the batch's.
  if (std::find(o.ops.begin(), o.ops.end(), "train") != o.ops.end())
    for (const int64_t batch : o.train_batches)
      WN_CHECK(o.train.images >= batch, "bench train: --images ", o.train.images, " is less than one batch of ", batch,
               ": every epoch would be a single partial batch; give --images at least the largest --batch");

  const device::gpu::Info info = device::gpu::probe();
  std::printf("warpnet bench: seed %llu, at most %d timed runs or %.1f s per version, %s\n",
              (unsigned long long)s.seed, s.runs, s.budget_s,
              info.usable ? cat("GPU ", info.name, " (sm_", info.cc_major, info.cc_minor, ", ", info.multiprocessors, " SMs, ",
                                info.clock_ghz, " GHz, driver ", info.driver, ", cuBLAS ", info.cublas, ")").c_str()
                          : cat("GPU part SKIPPED: ", info.why_not).c_str());

  json record = bench::record_header(info, s.seed);
  record["settings"] = {{"max_runs", s.runs}, {"min_runs", s.min_runs}, {"budget_s", s.budget_s}, {"timeout_s", s.timeout_s},
                        {"timing", "GPU: CUDA events around the launch, the L2 flushed (a 2xL2 buffer written) before each run; "
                                   "CPU: wall clock, a 512 MiB buffer written before each run; median reported"}};
  record["ops"] = json::array();
  bool all_ok = true, measured = false;
  for (const std::string& name : o.ops) {
    if (name == "train") {
      // One record entry per batch size, in the order given: how the
      // speed-up grows as a batch fills more of the GPU. The record is
      // written after each measurement, so a run stopped by a time limit
      // keeps what it measured; the fused step and the launch floor come in
      // a second pass, after every batch size's first (bench_train.cpp).
      const auto save = [&] {
        if (!o.json_path.empty()) write_file_atomically(o.json_path, record.dump(1) + "\n");
      };
      const size_t first = record["ops"].size();
      for (const int64_t batch : o.train_batches) {
        bench::TrainSettings t = o.train;
        t.batch = batch;
        record["ops"].push_back(bench::bench_train(t, s, info));
        save();
      }
      for (size_t i = 0; i < o.train_batches.size(); ++i) {
        bench::TrainSettings t = o.train;
        t.batch = o.train_batches[i];
        bench::bench_train_beyond(record["ops"][first + i], t, s, info);
        save();
      }
      continue;
    }
    const device::Op& op = device::op(name);
    std::vector<device::Sizes> sizes;
    for (const std::string& text : o.sizes) sizes.push_back(device::complete_sizes(op, parse_number_list(text, "bench: --size")));
    if (sizes.empty()) sizes = op.bench_sizes.empty() ? std::vector<device::Sizes>{op.defaults} : op.bench_sizes;
    const auto kernels = gpu_kernels(op.name, o.kernels);
    for (const device::Sizes& size : sizes) {
      const double flops = op_flops(op.name, size, kernels);
      std::printf("\n%s %s (%.4g GFLOP)\n", op.name.c_str(), device::describe_sizes(op, size).c_str(), flops * 1e-9);
      json rec = {{"op", op.name}, {"size_names", op.size_names}, {"sizes", size}, {"flops", flops},
                  {"relative_error_bound", device::relative_bound(op, size)}};
      rec["cpu"] = o.no_cpu ? json{{"skipped", "--no-cpu"}} : bench::cpu_half(op, size, s);
      if (!info.usable) rec["gpu"] = {{"skipped", info.why_not}};
      else if (kernels.empty()) rec["gpu"] = {{"skipped", cat("no CUDA version of ", op.name, " is registered")}};
      else rec["gpu"] = bench::gpu_half(op.name, size, kernels, s);
      if (rec["gpu"].contains("kernels")) {
        bench::add_ratios(rec["gpu"], info, rec["cpu"], flops);
        for (const json& r : rec["gpu"]["kernels"]) all_ok = all_ok && r["status"] == "ok";
        measured = true;
      }
      measured = measured || rec["cpu"].contains("rows");
      bench::print_table(rec, flops);
      record["ops"].push_back(rec);
      // Rewritten after every size: a run cut short (a time limit) keeps what it measured.
      if (!o.json_path.empty()) {
        write_file_atomically(o.json_path, record.dump(1) + "\n");
        std::printf("\nwrote %s\n", o.json_path.c_str());
      }
    }
  }
  if (!info.usable) std::printf("\nGPU part skipped: %s\n", info.why_not.c_str());
  WN_CHECK(all_ok, "bench: some GPU versions failed or gave wrong results (see the table and the record)");
  const bool only_train = std::all_of(o.ops.begin(), o.ops.end(), [](const std::string& n) { return n == "train"; });
  WN_CHECK(measured || only_train, "bench: nothing was measured: the GPU part was skipped (",
           info.usable ? "no CUDA version of these ops" : info.why_not, ") and so was the CPU part",
           o.no_cpu ? " (--no-cpu)" : "");
}

}  // namespace

json bench::record_header(const device::gpu::Info& info, uint64_t seed) {
  json record = machine_record();
  record["benchmark"] = "warpnet bench";
  record["warpnet"] = {{"version", build::version}, {"build_type", build::build_type}, {"compiler", build::compiler},
                       {"cuda_toolkit", build::cuda_toolkit}, {"cuda_version", build::cuda_version},
                       {"cuda_architectures", build::cuda_architectures}};
  record["hardware_threads"] = std::thread::hardware_concurrency();
  record["gpu"] = bench::info_json(info);
  const char* tf32 = std::getenv("NVIDIA_TF32_OVERRIDE");
  record["NVIDIA_TF32_OVERRIDE"] = tf32 ? json(tf32) : json(nullptr);
  record["seed"] = seed;
  return record;
}

void add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  o->settings.seed = uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) % 1000000007ull;
  CLI::App* cmd = app.add_subcommand("bench", "Check and time every kernel version of an op on the GPU and the CPU");
  cmd->add_option("op", o->ops,
                  "ops to run: names (matmul), the start of several (conv), train (images/s of a training "
                  "run), precision (one matmul in every number format: error and time), or allreduce "
                  "(under mpirun: latency and bus bandwidth by message size, and the "
                  "alpha-beta model); default: every op in the registry");
  cmd->add_option("--size", o->sizes,
                  "problem sizes, comma-separated (matmul: M,N,K[,trans_a,trans_b]), those left off at the end the op's "
                  "defaults; repeatable; for one op, or several whose sizes are named alike (conv2d conv2d_dgrad "
                  "conv2d_wgrad)");
  cmd->add_option("--runs", o->settings.runs,
                  "most timed runs per version; the median is reported (allreduce: per size, default 2000)")
      ->check(whole_in_range(1, kIntMax))
      ->capture_default_str();
  cmd->add_option("--budget", o->settings.budget_s,
                  "seconds of timed runs per version before stopping (at least 3 runs; allreduce: per size, default 0.25)")
      ->check(kPositive)
      ->capture_default_str();
  cmd->add_option("--timeout", o->settings.timeout_s,
                  "a GPU launch still running after this many seconds is reported hung (allreduce: a rank that does "
                  "not answer)")
      ->check(kPositive)
      ->capture_default_str();
  cmd->add_option("--kernels", o->kernels,
                  "only these CUDA versions, comma-separated: ids (matmul/03_smem_tiled), op/version (matmul/3), "
                  "names (smem_tiled) or, for one op, version numbers (3); version 0 always runs");
  cmd->add_option("--seed", o->settings.seed, "seed of the random inputs (default: from the clock; printed)")
      ->check(kSeed);
  cmd->add_option("--threads", o->settings.threads, "CPU threads (0: all cores)")->check(whole_in_range(0, 1024))
      ->capture_default_str();
  cmd->add_flag("--no-cpu", o->no_cpu, "skip the CPU half");
  cmd->add_option("--model", o->train.model, "train: the model")->check(CLI::IsMember({"mlp", "lenet5", "alexnet"}))
      ->capture_default_str();
  cmd->add_option("--batch", o->train_batches, "train: images per batch; several, comma-separated, time each (64,256,1024)")
      ->delimiter(',')
      ->check(whole_in_range(1, 65536))
      ->capture_default_str();
  cmd->add_option("--images", o->train.images, "train: images per timed epoch (several batches: 8192 is 8 of 1024)")
      ->check(whole_in_range(1, 1 << 24))
      ->capture_default_str();
  cmd->add_option("--epoch-seconds", o->train.min_timed_seconds,
                  "train: an epoch shorter than this is timed in groups of epochs lasting as long; 0: each epoch alone")
      ->check(in_range(0, 60))
      ->capture_default_str();
  cmd->add_option("--json", o->json_path, "write the record (machine, GPU, every figure) here")->check(kOutputPath);
  cmd->add_option("--precisions", o->precision.precisions,
                  "precision: which, comma-separated (fp32,tf32,bf16,fp16,e4m3,e5m2,e2m1; default all)")
      ->delimiter(',')
      ->group("precision");
  cmd->add_option("--backends", o->precision.backends, "precision: which, comma-separated (cpu,emu,cuda; default all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"cpu", "emu", "cuda"}))
      ->group("precision");
  cmd->add_option("--emu-size", o->precision.emu_size, "precision: M,N,K on the emulator (default 128^3, or --size)")
      ->group("precision");
  cmd->add_option("--gpu-size", o->precision.gpu_size, "precision: M,N,K on the GPU (default 8192^3, or --size)")
      ->group("precision");
  cmd->add_flag("--trans-b", o->precision.trans_b,
                "precision: B stored (N,K), C = A·Bᵀ: a linear layer's forward, and fp8's native layout (default: B (K,N))")
      ->group("precision");
  // allreduce (bench_allreduce.hpp): under mpirun -np N.
  const int64_t kMaxMessage = int64_t(1) << 40;
  cmd->add_option("--min-bytes", o->allreduce.min_bytes, "allreduce: smallest message (at least 4: one float)")
      ->check(whole_in_range(4, kMaxMessage))
      ->group("allreduce")
      ->capture_default_str();
  cmd->add_option("--max-bytes", o->allreduce.max_bytes, "allreduce: largest message (sizes double)")
      ->check(whole_in_range(4, kMaxMessage))
      ->group("allreduce")
      ->capture_default_str();
  cmd->add_option("--params", o->allreduce.params,
                  "allreduce: predict for gradients of this many parameters (default: no prediction)")
      ->check(kPositive)
      ->group("allreduce");
  cmd->add_option("--grad-bytes", o->allreduce.grad_bytes, "allreduce: bytes per gradient value (2 bf16, 4 f32)")
      ->check(whole_in_range(1, 8))
      ->group("allreduce")
      ->capture_default_str();
  cmd->add_option("--compute-ms", o->allreduce.compute_ms,
                  "allreduce: forward+backward ms per GPU and step, for step time and efficiency")
      ->check(kNonNegative)
      ->group("allreduce")
      ->capture_default_str();
  cmd->add_option("--gpus", o->allreduce.gpus, "allreduce: GPU counts to predict for")
      ->check(whole_in_range(1, 1 << 20))
      ->group("allreduce")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--gpu-worker", o->worker_out, "internal: run the GPU half here, events to this file")->group("");
  cmd->callback([o, cmd] {
    o->runs_given = cmd->count("--runs") > 0, o->budget_given = cmd->count("--budget") > 0;
    if (o->worker_out.empty()) refuse_unread_options(*cmd, o->ops);
    run_bench(*o);
  });
}

}  // namespace warpnet::cli
