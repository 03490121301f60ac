// warpnet trace KERNEL --size M,N,K: run a registered kernel's traced copy on
// the emulator, check it against the CPU reference, print how its warps use
// memory (coalescing, bank conflicts, divergence) — for each kernel a version
// launches, summed over its launches — and write the trace JSON the
// visualizer reads. --block/--warp also records that warp stop by stop.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/validators.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/number_list.hpp"
#include "device/registry.hpp"
#include "device/run.hpp"
#include "simt/launch.hpp"
#include "simt/stepper.hpp"
#include "simt/symbols.hpp"
#include "simt/trace.hpp"

namespace warpnet::cli {

namespace {

struct TraceOptions {
  std::string kernel, sizes, json, block;
  int warp = -1;
  uint64_t seed = 1;
};

double ratio(uint64_t a, uint64_t b) { return b ? double(a) / double(b) : 0.0; }

void print_summary(const simt::KernelTrace& t) {
  using simt::Space;
  const auto g_load = t.total(Space::global, false), g_store = t.total(Space::global, true);
  const auto s_load = t.total(Space::shared, false), s_store = t.total(Space::shared, true);
  for (const auto* s : {&g_load, &g_store}) {
    if (!s->requests) continue;
    std::printf("  global %-6s  efficiency %5.1f%%   %5.2f sectors per request (%llu requests)\n",
                s->write ? "stores" : "loads", 100 * ratio(s->ideal_sectors, s->sectors), ratio(s->sectors, s->requests),
                (unsigned long long)s->requests);
  }
  // TMA's boxes are the copy engine's reads, no instruction's: counted apart.
  if (t.bulk_copies)
    std::printf("  TMA copies      %llu boxes, %llu bytes (the largest %llu)\n", (unsigned long long)t.bulk_copies,
                (unsigned long long)t.bulk_bytes, (unsigned long long)t.bulk_largest);
  for (const auto* s : {&s_load, &s_store}) {
    if (!s->requests) continue;
    std::printf("  shared %-6s  bank-conflict degree %.2f (worst request %u wavefronts, %llu requests)\n",
                s->write ? "stores" : "loads", ratio(s->wavefronts, s->ideal_wavefronts), s->worst_wavefronts,
                (unsigned long long)s->requests);
  }
  std::printf("  barriers        %llu __syncthreads() released (%.1f per block); warp shuffles, votes and "
              "reductions: %llu (%.1f per warp)\n",
              (unsigned long long)t.barriers, ratio(t.barriers, t.blocks), (unsigned long long)t.warp_collectives,
              ratio(t.warp_collectives, t.warps));
  if (t.atomics)
    std::printf("  atomics         %llu lane operations (%.1f per warp)\n", (unsigned long long)t.atomics,
                ratio(t.atomics, t.warps));
  uint64_t requests = 0, active = 0, inactive = 0;
  for (const auto& i : t.instructions) requests += i.requests, active += i.active_lanes, inactive += i.inactive_lanes;
  std::printf("  memory instructions per warp %.1f; divergence: %.1f%% of lane slots sat out\n", ratio(requests, t.warps),
              100 * ratio(inactive, active + inactive));
  // The compiler may unroll a loop into many instructions: sum them per source line.
  std::map<std::tuple<std::string, Space, bool>, simt::InstructionStats> lines;
  for (const auto& i : t.instructions) {
    simt::InstructionStats& l = lines[{simt::describe_code(i.pc), i.space, i.write}];
    l.bytes = i.bytes;
    l.requests += i.requests;
    l.sectors += i.sectors;
    l.wavefronts += i.wavefronts;
    l.ideal_wavefronts += i.ideal_wavefronts;
  }
  std::printf("  per source line:\n");
  for (const auto& [key, l] : lines) {
    const auto& [where, space, write] = key;
    std::printf("    %-6s %-5s %2u B  %8llu req  ", space == Space::global ? "global" : "shared", write ? "store" : "load",
                l.bytes, (unsigned long long)l.requests);
    if (space == Space::global)
      std::printf("%5.2f sectors/req  ", ratio(l.sectors, l.requests));
    else
      std::printf("%5.2f-way conflict ", ratio(l.wavefronts, l.ideal_wavefronts));
    std::printf(" %s\n", where.c_str());
  }
}

void run_trace(const TraceOptions& o) {
  if (!o.json.empty()) prepare_output_file(o.json, "trace --json", kJsonFile);
  const device::Kernel& kernel = device::find_kernel(o.kernel, device::Copy::traced);
  const device::Op& op = device::op(kernel.op);
  const device::Sizes sizes = device::complete_sizes(op, parse_number_list(o.sizes, "trace: --size"));
  WN_CHECK(kernel.emulator, "trace: ", kernel.id(), " runs only on a GPU");
  device::check_traced_work(kernel, sizes, "trace");
  Rng rng(o.seed);
  const auto inputs = device::make_inputs(kernel, sizes, rng);
  device::check_traced_memory(kernel, sizes, inputs, "trace");
  const device::Launch shape = kernel.shape(sizes);

  simt::set_workers(1);  // blocks in order: the samples and steps repeat exactly
  // A big grid takes minutes traced on one worker: a bar per launch that runs past a second.
  std::optional<ProgressBar> bar;
  simt::set_launch_progress([&](const simt::LaunchProgress& p) {
    if (!bar) bar.emplace(cat("tracing ", p.kernel, ": blocks"));
    bar->update(int64_t(p.blocks_started), int64_t(p.blocks), "");
    if (p.blocks_started == p.blocks) {  // the launch's end: the next launch gets a bar of its own
      bar->finish();
      bar.reset();
    }
  });
  struct StopReporting {  // also when the launch throws: the bar's line ends before the error
    std::optional<ProgressBar>& bar;
    ~StopReporting() {
      simt::set_launch_progress(nullptr);
      if (bar) bar->finish();
    }
  } stop_reporting{bar};
  // A version may launch several kernels (split-K's sum, im2col then a GEMM): every launch is kept.
  simt::TraceRecorder recorder;
  std::vector<Tensor> out;
  nlohmann::json steps = nlohmann::json::array();
  if (o.warp >= 0 || !o.block.empty()) {
    auto b = parse_number_list(o.block.empty() ? "0" : o.block, "trace: --block");
    WN_CHECK(b.size() <= 3, "trace: --block ", o.block, ": a block is x,y[,z], at most 3 numbers");
    for (int64_t i : b)
      WN_CHECK(i >= 0 && i < (int64_t(1) << 31), "trace: --block ", o.block, ": ", i,
               " is not a block index (0 to 2^31 - 1)");
    b.resize(3, 0);
    simt::Stepper stepper(uint3{unsigned(b[0]), unsigned(b[1]), unsigned(b[2])}, unsigned(std::max(o.warp, 0)),
                          [&] { out = device::run_emulated(kernel, sizes, inputs); });
    while (stepper.step()) steps.push_back(simt::to_json(stepper.stop()));
    WN_CHECK(!steps.empty(), "trace: block (", b[0], ",", b[1], ",", b[2], ") warp ", std::max(o.warp, 0),
             " never stopped: no launch of ", kernel.id(), " at ", device::describe_sizes(op, sizes),
             " has that warp, or it touched no memory and met no barrier (the registry's launch: grid (",
             shape.grid.x, ",", shape.grid.y, ",", shape.grid.z, "), block (", shape.block.x, ",", shape.block.y,
             ",", shape.block.z, "))");
  } else {
    out = device::run_emulated(kernel, sizes, inputs);
  }
  const device::Comparison check = device::compare(kernel, sizes, inputs, out);
  std::vector<int> launches;
  const std::vector<simt::KernelTrace> kernels = recorder.by_kernel(&launches);
  WN_CHECK(!kernels.empty(), "trace: ", kernel.id(), " made no traced memory access");

  std::printf("%s at %s: traced on the emulator\n", kernel.id().c_str(), device::describe_sizes(op, sizes).c_str());
  std::printf("  result: %s the CPU reference (%lld elements, worst error %.3g of the tolerance)\n",
              check.mismatches ? "DIFFERS FROM" : "matches", (long long)check.checked, check.worst_ratio);
  uint64_t global_bytes = 0;  // by the instructions and by TMA's copies
  for (const simt::KernelTrace& t : kernels) {
    global_bytes += t.bulk_bytes;
    for (const auto& i : t.instructions)
      if (i.space == simt::Space::global) global_bytes += i.active_lanes * i.bytes;
  }
  std::printf("  global bytes asked for: %.4g (registry formula %.4g); FLOPs %.4g\n", double(global_bytes),
              kernel.bytes(sizes), kernel.flops(sizes));
  // Each kernel's own launch (its first, where it made several), not the
  // registered shape: a version may launch others (split-K's sum, or the
  // kernel it runs where TMA cannot describe the shape).
  for (size_t k = 0; k < kernels.size(); ++k) {
    const simt::LaunchShape& launched = kernels[k].shape;
    const std::string grid = cat(launches[k] > 1 ? "the first " : "", "grid (", launched.grid.x, ",", launched.grid.y,
                                 ",", launched.grid.z, "), block (", launched.block.x, ",", launched.block.y, ",",
                                 launched.block.z, ")");
    if (kernels.size() > 1)
      std::printf("  kernel %zu of %zu: %s, %d launch%s, %llu warps, %s\n", k + 1, kernels.size(),
                  kernels[k].kernel.c_str(), launches[k], launches[k] == 1 ? "" : "es",
                  (unsigned long long)kernels[k].warps, grid.c_str());
    else
      std::printf("  kernel %s, %d launch%s, %llu warps, %s\n", kernels[k].kernel.c_str(), launches[k],
                  launches[k] == 1 ? "" : "es", (unsigned long long)kernels[k].warps, grid.c_str());
    print_summary(kernels[k]);
  }
  if (!steps.empty())
    std::printf("  block %s warp %d: %zu stops recorded%s\n", o.block.empty() ? "0" : o.block.c_str(),
                std::max(o.warp, 0), steps.size(), o.json.empty() ? " (--json FILE keeps them)" : "");

  if (!o.json.empty()) {
    // The first kernel's trace, as the visualizer reads it; any others after it.
    nlohmann::json j = kernels[0].to_json();
    j["launches"] = launches[0];
    j["other_kernels"] = nlohmann::json::array();
    for (size_t k = 1; k < kernels.size(); ++k) {
      nlohmann::json other = kernels[k].to_json();
      other["launches"] = launches[k];
      j["other_kernels"].push_back(std::move(other));
    }
    j["id"] = kernel.id();
    j["sizes"] = sizes;
    j["size_names"] = op.size_names;
    j["flops"] = kernel.flops(sizes);
    j["bytes_formula"] = kernel.bytes(sizes);
    j["global_bytes_requested"] = global_bytes;
    j["matches_reference"] = check.mismatches == 0;
    j["steps"] = steps;
    write_file_atomically(o.json, j.dump(1) + "\n");
    std::printf("  wrote %s\n", o.json.c_str());
  }
  WN_CHECK(check.mismatches == 0, "trace: ", kernel.id(), " gave wrong results:\n", check.first);
}

}  // namespace

void add_trace_command(CLI::App& app) {
  auto opts = std::make_shared<TraceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "trace", "Run a kernel on the emulator with tracing: coalescing, bank conflicts, divergence, JSON trace");
  cmd->add_option("kernel", opts->kernel, "Kernel: id (matmul/03_smem_tiled), op/version (matmul/3) or name")
      ->required();
  cmd->add_option("--size", opts->sizes,
                  "Problem sizes, comma-separated (matmul: M,N,K); sizes left off at the end take the op's defaults "
                  "(`warpnet info --kernels` lists them)")
      ->required();
  cmd->add_option("--json", opts->json, "Write the trace (summary, per-instruction statistics, samples, steps) here")
      ->check(kOutputPath);
  cmd->add_option("--block", opts->block, "Record one warp of this block stop by stop: x,y[,z]");
  cmd->add_option("--warp", opts->warp, "The warp of --block to record (default 0)")->check(whole_in_range(0, 31));
  cmd->add_option("--seed", opts->seed, "Seed of the random inputs")->check(kSeed)->capture_default_str();
  cmd->callback([opts] { run_trace(*opts); });
}

}  // namespace warpnet::cli
