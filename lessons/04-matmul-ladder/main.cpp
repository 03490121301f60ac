// Lesson 04 — the matmul ladder, seen through the emulator's traces.
//
// Every matmul version in the kernel registry runs traced on the emulator at
// one size; the program checks each against the CPU reference and prints how
// its warps use memory: sectors per global load (coalescing), global bytes
// asked for and FLOPs per byte (tiling), shared-memory bank-conflict degree,
// memory instructions per warp. Then it checks the claims the chapter makes
// about them and exits non-zero if one does not hold. Last, the GPU figures
// recorded in bench/results/ by `warpnet bench` (scripts/gpu-check.sh), each
// table labelled with the GPU and date it came from.
//
// Run: build/bin/lesson04 [--markdown [sass]]   (about a second: 128^3, traced)
//   --markdown       print only the table, as the chapter's README holds it
//                    (scripts/lesson-tables.sh pastes it there)
//   --markdown sass  print only the table of the kernels' main loops counted
//                    in their SASS (sass_table.hpp; the README's "sass" table)
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "device/registry.hpp"
#include "device/run.hpp"
#include "lessons/bench_records.hpp"
#include "lessons/lesson_args.hpp"
#include "lessons/lesson_checks.hpp"
#include "sass_table.hpp"
#include "simt/launch.hpp"
#include "simt/trace.hpp"

using namespace warpnet;
using simt::Space;

namespace {

using lesson::expect;
using lesson::fixed;

double ratio(double a, double b) { return b ? a / b : 0.0; }

// What one version's trace says.
struct Figures {
  const device::Kernel* kernel;
  bool matches;
  double load_sectors_per_request;  // global loads
  double load_efficiency;           // the fewest sectors that hold the bytes / sectors touched
  unsigned widest_load;             // bytes per lane of the widest global load
  double global_bytes;              // asked for by the instructions, before any cache
  double flops_per_byte;
  double shared_load_conflicts, shared_store_conflicts;  // wavefronts / the fewest possible
  double instructions_per_warp;                          // memory instructions
  double tma_bytes;  // loaded by the copy engine (v13), not by instructions: no sectors per load to show
  unsigned tma_box;  // bytes of the largest TMA copy
};

Figures trace(const device::Kernel& kernel, const device::Sizes& sizes) {
  Rng rng(4);
  const auto inputs = device::make_inputs(kernel, sizes, rng);
  const std::vector<Tensor> out = device::run_emulated(kernel, sizes, inputs);
  const auto check = device::compare(kernel, sizes, inputs, out);
  const auto t = simt::last_trace();
  WN_CHECK(t.has_value(), kernel.id(), " left no trace");
  Figures f{&kernel, check.mismatches == 0, 0, 0, 0, 0, 0, 0, 0, 0, double(t->bulk_bytes),
            unsigned(t->bulk_largest)};
  const auto load = t->total(Space::global, false);
  const auto s_load = t->total(Space::shared, false), s_store = t->total(Space::shared, true);
  f.load_sectors_per_request = ratio(load.sectors, load.requests);
  f.load_efficiency = ratio(load.ideal_sectors, load.sectors);
  uint64_t requests = 0;
  for (const auto& i : t->instructions) {
    requests += i.requests;
    if (i.space != Space::global) continue;
    f.global_bytes += double(i.active_lanes) * i.bytes;
    if (!i.write) f.widest_load = std::max(f.widest_load, i.bytes);
  }
  f.global_bytes += f.tma_bytes;
  f.flops_per_byte = ratio(kernel.flops(sizes), f.global_bytes);
  f.shared_load_conflicts = ratio(s_load.wavefronts, s_load.ideal_wavefronts);
  f.shared_store_conflicts = ratio(s_store.wavefronts, s_store.ideal_wavefronts);
  f.instructions_per_warp = ratio(requests, t->warps);
  return f;
}

// A version without shared memory has no conflict degree.
std::string degree(double d) { return d ? fixed(d, 2) : "-"; }

void print_table(const std::vector<Figures>& all, const device::Sizes& sizes, bool markdown) {
  if (markdown)
    std::printf("| version | inputs | sectors / global load | load efficiency | widest load | global MB asked for | "
                "FLOPs / byte | shared conflicts (load / store) | memory instr. / warp |\n"
                "|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  else
    std::printf("%-32s %-6s %9s %6s %12s %9s %8s %15s %10s\n", "version", "inputs", "sect/load", "effic", "widest",
                "global MB", "FLOP/B", "conflicts l/s", "instr/warp");
  for (const Figures& f : all) {
    const std::string inputs = f.kernel->input_format ? (f.kernel->input_format == &simt::kHalf      ? "fp16"
                                                         : f.kernel->input_format == &simt::kBfloat16 ? "bf16"
                                                                                                       : "fp8")
                                                      : "fp32";
    const std::string conf = degree(f.shared_load_conflicts) + " / " + degree(f.shared_store_conflicts);
    // Tiles that TMA copies whole are no warp's loads: no sectors per load,
    // no efficiency; the widest "load" is the copy engine's box.
    const bool tma = f.tma_bytes > 0;
    const std::string mb = fixed(f.global_bytes / 1e6, 2);
    const std::string widest = tma ? std::to_string(f.tma_box / 1024) + " KiB TMA" : std::to_string(f.widest_load) + " B";
    const std::string sectors = tma ? "TMA" : fixed(f.load_sectors_per_request, 2);
    const std::string efficiency = tma ? "-" : fixed(100 * f.load_efficiency, 0) + "%";
    if (markdown)
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", f.kernel->id().c_str(), inputs.c_str(),
                  sectors.c_str(), efficiency.c_str(), widest.c_str(), mb.c_str(), fixed(f.flops_per_byte, 2).c_str(),
                  conf.c_str(), fixed(f.instructions_per_warp, 0).c_str());
    else
      std::printf("%-32s %-6s %9s %6s %12s %9s %8.2f %15s %10.0f\n", f.kernel->id().c_str(), inputs.c_str(),
                  sectors.c_str(), efficiency.c_str(), widest.c_str(), mb.c_str(), f.flops_per_byte, conf.c_str(),
                  f.instructions_per_warp);
  }
  if (markdown)
    std::printf("\nTraced on the emulator at %s (`build/bin/lesson04 --markdown`); counts, not times, so any "
                "machine prints the same table.\n",
                device::describe_sizes(device::op("matmul"), sizes).c_str());
}

// The vendor's row (version 0) of `format` in the record's matmul table of
// the most FLOPs, and that table's sizes; null when the record has none.
std::pair<const nlohmann::json*, std::string> largest_vendor(const nlohmann::json& record, const std::string& format) {
  const nlohmann::json* best = nullptr;
  std::string sizes;
  double most = 0;
  using lesson::field;
  for (const nlohmann::json& op : field(record, "ops")) {
    if (op.value("op", "") != "matmul" || op.value("flops", 0.0) <= most) continue;
    for (const nlohmann::json& k : field(field(op, "gpu"), "kernels"))
      if (k.value("version", -1) == 0 && k.value("input_format", "") == format && k.value("status", "") == "ok") {
        best = &k, sizes = field(op, "sizes").dump(), most = op.value("flops", 0.0);
        break;
      }
  }
  return {best, sizes};
}

// A record's peak table (the instruction ceilings, kernels/peak): each
// version's rate, as a share of the datasheet's peak and of the vendor's
// matmul in its format at the record's largest matmul size, timed in the same
// run (`warpnet bench matmul peak`, as gpu-check.sh runs it).
void print_peak_table(const nlohmann::json& record, const nlohmann::json& op) {
  std::printf("| version | inputs | TFLOP/s | %% of peak | %% of the vendor's matmul (this record) |\n"
              "|---|---|---:|---:|---:|\n");
  const nlohmann::json none;
  using lesson::field;
  for (const nlohmann::json& k : field(field(op, "gpu"), "kernels")) {
    const bool ok = k.value("status", "") == "ok";
    const auto [vendor, sizes] = largest_vendor(record, k.value("input_format", ""));
    std::string share = "-";
    if (ok && vendor && field(k, "tflops").is_number() && field(*vendor, "tflops").is_number())
      share = fixed(100 * k["tflops"].get<double>() / (*vendor)["tflops"].get<double>(), 1) + " (" +
              (*vendor).value("kernel", "?") + " at " + sizes + ")";
    std::printf("| %s | %s | %s | %s | %s |\n", k.value("kernel", "?").c_str(), k.value("input_format", "?").c_str(),
                ok ? lesson::record_number(k.value("tflops", none), 1).c_str() : k.value("status", "?").c_str(),
                lesson::record_number(k.value("percent_of_peak", none), 1).c_str(), share.c_str());
  }
}

// Every matmul table of every GPU record in bench/results (the source tree's),
// oldest first, and its peak table where it has one; a line saying there is
// none yet otherwise.
void print_gpu_records() {
  namespace fs = std::filesystem;
  using lesson::field;
  int tables = 0;
  lesson::show_each_record([&](const lesson::BenchRecord& r) {
    const fs::path& file = r.file;
    const nlohmann::json& record = r.json;
    if (!lesson::is_gpu_bench_record(record)) return;
    const nlohmann::json& gpu = field(record, "gpu");
    const int before = tables;
    for (const nlohmann::json& op : field(record, "ops")) {
      const bool timed = field(op, "gpu").contains("kernels");
      if (op.value("op", "") == "peak" && timed) {
        std::printf("\n**%s**, %s, `%s`, the instruction ceilings (peak) at %s:\n\n", gpu.value("name", "?").c_str(),
                    record.value("date", "?").c_str(), fs::relative(file, WARPNET_SOURCE_DIR).c_str(),
                    field(op, "sizes").dump().c_str());
        print_peak_table(record, op);
        continue;
      }
      if (op.value("op", "") != "matmul" || !timed) continue;
      std::printf("\n**%s** (sm_%s, driver %s, cuBLAS %s), %s, `%s`, matmul %s:\n\n", gpu.value("name", "?").c_str(),
                  gpu.value("compute_capability", "?").c_str(), gpu.value("driver", "?").c_str(),
                  gpu.value("cublas", "?").c_str(), record.value("date", "?").c_str(),
                  fs::relative(file, WARPNET_SOURCE_DIR).c_str(), field(op, "sizes").dump().c_str());
      lesson::print_gpu_kernel_table(op, "cuBLAS");
      ++tables;
    }
    if (tables > before) lesson::print_cpu_column_note(record);
  });
  if (!tables)
    std::printf("\nNo GPU has run the ladder yet: bench/results/ holds no `warpnet bench` record from a GPU. "
                "Figures appear here from `scripts/gpu-check.sh` on a real one; they are never estimated.\n");
}

// The claims the chapter makes, checked on this run's figures.
void check_claims(const std::map<int, Figures>& v) {
  for (const auto& [version, f] : v) expect(f.matches, f.kernel->id() + " matches the CPU reference");
  auto has = [&](int version) { return v.count(version) == 1; };
  if (has(1) && has(2)) {
    expect(v.at(2).load_sectors_per_request < v.at(1).load_sectors_per_request / 2,
           "v2 (lanes along columns) needs under half the sectors per load of v1 (lanes along rows)");
    expect(v.at(2).global_bytes == v.at(1).global_bytes, "v1 and v2 ask for the same bytes; only sectors differ");
  }
  if (has(2) && has(3))
    expect(v.at(3).global_bytes < v.at(2).global_bytes / 10, "16x16 shared tiles cut global bytes over 10x");
  if (has(3) && has(5))
    expect(v.at(5).flops_per_byte > v.at(3).flops_per_byte * 4,
           "a 128x128 block tile with 8x8 per thread does over 4x the FLOPs per byte of 16x16 tiles");
  if (has(6)) expect(v.at(6).widest_load == 16, "v6 loads 16 bytes (a float4) per lane");
  if (has(6) && has(7)) {
    expect(v.at(6).shared_load_conflicts > 1.0, "v6 still has shared-memory bank conflicts");
    expect(v.at(7).shared_load_conflicts == 1.0 && v.at(7).shared_store_conflicts == 1.0,
           "v7 is free of bank conflicts");
  }
  if (has(12)) expect(v.at(12).shared_load_conflicts == 1.0, "v12's ldmatrix loads are conflict-free");
  if (has(12) && has(13)) {
    expect(v.at(13).tma_bytes > 0 && v.at(13).widest_load == 0, "v13's threads load nothing: TMA copies every tile");
    expect(v.at(13).instructions_per_warp < v.at(12).instructions_per_warp / 2,
           "v13's warps issue under half the memory instructions of v12's (only the epilogue's stores)");
  }
}

// The chapter, with its arguments checked by main.
int run(bool markdown, bool sass) {
  if (sass) {
    lesson::print_sass_table();
    return lesson::failures() ? 1 : 0;
  }
  simt::set_workers(1);  // blocks in order: the same trace every run
  // 128: the 128x128 block tiles of v5 and later see more than one tile of
  // C, so their reuse shows (at 64^3 one tile covers everything).
  const device::Sizes sizes{128, 128, 128, 0, 0};
  if (!markdown)
    std::printf("Lesson 04: every matmul version of the registry, traced on the emulator at %s\n\n",
                device::describe_sizes(device::op("matmul"), sizes).c_str());
  std::vector<Figures> all;
  std::map<int, Figures> by_version;
  for (const device::Kernel* k : device::kernels(device::Copy::traced)) {
    if (k->op != "matmul") continue;
    if (!k->emulator) {
      if (!markdown) std::printf("%s runs only on a GPU (%s); not traced\n", k->id().c_str(), k->precision.c_str());
      continue;
    }
    all.push_back(trace(*k, sizes));
    by_version.emplace(k->version, all.back());
  }
  print_table(all, sizes, markdown);
  check_claims(by_version);
  print_gpu_records();
  if (!markdown) {
    std::printf("\nThe main loops in the SASS (lesson 04, \"Counting the loop\"):\n\n");
    lesson::print_sass_table();
  }
  if (lesson::failures()) std::fprintf(stderr, "\n%d figure(s) differ from the lesson\n", lesson::failures());
  return lesson::failures() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  lesson::answer_help(argc, argv, "[--markdown [sass]]   (--markdown: the README's tables; sass: the SASS loop table)");
  const bool markdown = argc >= 2 && std::strcmp(argv[1], "--markdown") == 0;
  const bool sass = markdown && argc == 3 && std::strcmp(argv[2], "sass") == 0;
  if ((argc > 1 && !markdown) || argc > 3 || (argc == 3 && !sass)) {
    const char* bad = !markdown ? argv[1] : argc == 3 ? argv[2] : argv[3];
    std::fprintf(stderr, "%s: unknown argument '%s'\nusage: %s [--markdown [sass]]\n", argv[0], bad, argv[0]);
    return 2;
  }
  try {
    return run(markdown, sass);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lesson04: %s\n", e.what());
    return 1;
  }
}
