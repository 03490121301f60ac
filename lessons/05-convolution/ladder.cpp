// Lesson 05, part 3: the convolution ladder seen through the emulator's traces.
//
// Each version runs traced on the emulator (the registry's traced copy) at one
// layer, is checked against the CPU reference, and its warps' memory traffic
// is summed: global bytes its instructions ask for (against the byte formula
// it registered), 32-byte sectors per global load, shared-memory wavefronts
// per request (bank conflicts), FLOPs per byte, and the device memory it
// allocates beyond its inputs and outputs (im2col's column matrix, split-K
// partial sums).
//
// Several versions make more than one launch (v3: im2col then a GEMM, per
// image): a simt::TraceRecorder keeps the trace of each. Each version also
// runs under a simt::Stepper watching warp 0 of block (0,0,0), which pauses
// the launches at that warp's memory accesses, where the program reads how
// much device memory is allocated (a workspace lives only during its launch).
#include "lessons/05-convolution/ladder.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/memory.hpp"
#include "lessons/bench_records.hpp"
#include "lessons/lesson_checks.hpp"
#include "device/run.hpp"
#include "simt/allocations.hpp"
#include "simt/launch.hpp"
#include "simt/stepper.hpp"
#include "simt/trace.hpp"

namespace warpnet::lesson05 {

void Claims::expect(bool ok, const std::string& what) {
  if (!ok) std::printf("  !! expected: %s\n", what.c_str()), ++failed;
}

namespace {

using simt::KernelTrace;
using simt::Space;

double ratio(double a, double b) { return b ? a / b : 0.0; }

using lesson::fixed;

// ---- every launch of a version ----------------------------------------------

int64_t device_bytes_allocated() {
  int64_t bytes = 0;
  for (const simt::Allocation& a : simt::allocation_snapshot()) bytes += int64_t(a.bytes);
  return bytes;
}

struct Watched {
  std::vector<KernelTrace> launches;  // in launch order
  int64_t peak_allocated = 0;         // device bytes allocated at the fullest pause
  int pauses = 0;                     // how often the stepper stopped: none, and nothing was seen
};

// Runs `launches` (host code making one or more kernel launches) and
// returns the trace of each launch it made, and the most device memory
// allocated at any pause of a stepper watching warp 0 of block (0,0,0).
Watched watch(const std::function<void()>& launches) {
  Watched w;
  simt::TraceRecorder recorder;
  {
    simt::Stepper stepper(uint3{0, 0, 0}, 0, launches);
    while (stepper.step()) {
      w.peak_allocated = std::max(w.peak_allocated, device_bytes_allocated());
      ++w.pauses;
    }
  }
  w.launches = recorder.launches();
  return w;
}

// ---- one version's figures --------------------------------------------------

// One kernel of a version's launches ("conv2d_im2col", run once per image).
struct Part {
  std::string kernel;
  int launches = 0;
  double global_bytes = 0, store_bytes = 0;
};

struct Figures {
  const device::Kernel* kernel = nullptr;
  device::Comparison check;
  std::vector<Part> parts;  // in order of first launch
  int launches = 0;
  double global_bytes = 0;  // asked for by the instructions (loads + stores), before any cache, and by TMA
  double tma_bytes = 0;     // loaded by the copy engine (v13), not by instructions: no sectors per load to show
  double store_bytes = 0;
  double formula_bytes = 0;  // what the version registered (Kernel::bytes)
  double load_sectors_per_request = 0, load_efficiency = 0;
  unsigned widest_load = 0;  // bytes per lane
  double flops_per_byte = 0;
  double shared_load_conflicts = 0, shared_store_conflicts = 0;  // wavefronts / the fewest possible
  // Device bytes allocated beyond the inputs and outputs; unseen when warp 0
  // of block 0 never stopped (no memory access, no __syncthreads: v15's
  // producer warp, whose CTAs meet at cluster barriers instead).
  std::optional<int64_t> workspace;
};

// "sgemm_warptiling<128, 128, ...>" -> "sgemm_warptiling".
std::string base_name(const std::string& kernel) { return kernel.substr(0, kernel.find('<')); }

Figures trace(const device::Kernel& kernel, const device::Sizes& sizes) {
  const device::Op& op = device::op(kernel.op);
  Rng rng(5);
  const std::vector<Tensor> inputs = device::make_inputs(kernel, sizes, rng);
  int64_t io_bytes = int64_t(device::output_element_bytes(kernel)) * device::total_elements(op.output_shapes(sizes));
  for (const Tensor& t : inputs) io_bytes += int64_t(device::device_bytes(kernel, t).size());
  const int64_t before = device_bytes_allocated();
  std::vector<Tensor> out;
  const Watched w = watch([&] { out = device::run_emulated(kernel, sizes, inputs); });

  Figures f;
  f.kernel = &kernel;
  f.check = device::compare(kernel, sizes, inputs, out);
  f.formula_bytes = kernel.bytes(sizes);
  f.launches = int(w.launches.size());
  if (w.pauses > 0) f.workspace = w.peak_allocated - before - io_bytes;
  double sectors = 0, requests = 0, ideal = 0, s_load[2] = {0, 0}, s_store[2] = {0, 0};
  for (const KernelTrace& t : w.launches) {
    const std::string name = base_name(t.kernel);
    auto part = std::find_if(f.parts.begin(), f.parts.end(), [&](const Part& p) { return p.kernel == name; });
    if (part == f.parts.end()) part = f.parts.insert(f.parts.end(), Part{name});
    ++part->launches;
    f.tma_bytes += double(t.bulk_bytes);
    const simt::InstructionStats load = t.total(Space::global, false);
    sectors += double(load.sectors), requests += double(load.requests), ideal += double(load.ideal_sectors);
    const simt::InstructionStats sl = t.total(Space::shared, false), ss = t.total(Space::shared, true);
    s_load[0] += double(sl.wavefronts), s_load[1] += double(sl.ideal_wavefronts);
    s_store[0] += double(ss.wavefronts), s_store[1] += double(ss.ideal_wavefronts);
    for (const simt::InstructionStats& i : t.instructions) {
      if (i.space != Space::global) continue;
      const double bytes = double(i.active_lanes) * i.bytes;
      part->global_bytes += bytes;
      if (i.write) part->store_bytes += bytes;
      if (!i.write) f.widest_load = std::max(f.widest_load, i.bytes);
    }
  }
  for (const Part& p : f.parts) f.global_bytes += p.global_bytes, f.store_bytes += p.store_bytes;
  f.global_bytes += f.tma_bytes;
  f.load_sectors_per_request = ratio(sectors, requests);
  f.load_efficiency = ratio(ideal, sectors);
  f.flops_per_byte = ratio(kernel.flops(sizes), f.global_bytes);
  f.shared_load_conflicts = ratio(s_load[0], s_load[1]);
  f.shared_store_conflicts = ratio(s_store[0], s_store[1]);
  return f;
}

// ---- tables -----------------------------------------------------------------

// A version without shared memory has no conflict degree.
std::string degree(double d) { return d ? fixed(d, 2) : "-"; }
std::string megabytes(double bytes) { return fixed(bytes / 1e6, 2); }
std::string inputs_of(const device::Kernel& k) {
  if (!k.input_format) return "fp32";
  return k.input_format == &simt::kHalf ? "fp16" : k.input_format == &simt::kBfloat16 ? "bf16" : "fp8";
}

void print_table(const std::string& op, const std::vector<Figures>& all, bool markdown) {
  if (markdown) {
    std::printf("\n**%s**\n\n", op.c_str());
    std::printf(
        "| version | inputs | launches | global MB asked for | formula MB | sectors / global load | "
        "load efficiency | FLOPs / byte | shared conflicts (load / store) | device workspace |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  } else {
    std::printf("\n  %s\n  %-36s %-5s %8s %10s %10s %9s %6s %7s %13s %11s  %s\n", op.c_str(), "version", "in",
                "launches", "global MB", "formula MB", "sect/load", "effic", "FLOP/B", "conflicts l/s", "workspace",
                "check");
  }
  for (const Figures& f : all) {
    const std::string conflicts = degree(f.shared_load_conflicts) + " / " + degree(f.shared_store_conflicts);
    // Tiles that TMA copies whole are no warp's loads: no sectors per load, no efficiency.
    const bool tma = f.tma_bytes > 0;
    const std::string sectors = tma ? "TMA" : fixed(f.load_sectors_per_request, 2);
    const std::string efficiency = tma ? "-" : fixed(100 * f.load_efficiency, 0) + "%";
    const std::string workspace = !f.workspace ? "unseen" : *f.workspace ? format_bytes(*f.workspace) : "-";
    if (markdown) {
      std::printf("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", f.kernel->id().c_str(),
                  inputs_of(*f.kernel).c_str(), f.launches, megabytes(f.global_bytes).c_str(),
                  megabytes(f.formula_bytes).c_str(), sectors.c_str(), efficiency.c_str(),
                  fixed(f.flops_per_byte, 2).c_str(), conflicts.c_str(), workspace.c_str());
    } else {
      std::printf("  %-36s %-5s %8d %10s %10s %9s %6s %7.2f %13s %11s  %s\n", f.kernel->id().c_str(),
                  inputs_of(*f.kernel).c_str(), f.launches, megabytes(f.global_bytes).c_str(),
                  megabytes(f.formula_bytes).c_str(), sectors.c_str(), efficiency.c_str(), f.flops_per_byte,
                  conflicts.c_str(), workspace.c_str(), f.check.mismatches ? "MISMATCH" : "matches the CPU");
      if (f.check.mismatches) std::printf("%s", f.check.first.c_str());
    }
    // A version made of several kernels: each one's share of the bytes.
    if (f.parts.size() < 2) continue;
    for (const Part& p : f.parts) {
      if (markdown)
        std::printf("| &nbsp;&nbsp;↳ `%s` | | %d | %s | | | | | | |\n", p.kernel.c_str(), p.launches,
                    megabytes(p.global_bytes).c_str());
      else
        std::printf("    ↳ %-32s %14d %10s\n", p.kernel.c_str(), p.launches, megabytes(p.global_bytes).c_str());
    }
  }
}

// ---- the claims -------------------------------------------------------------

const Part* part_named(const Figures& f, const std::string& kernel) {
  for (const Part& p : f.parts)
    if (p.kernel == kernel) return &p;
  return nullptr;
}

// What the chapter says about the figures, checked on this run's. Only
// versions the chapter discusses by number are named; a new one is checked
// against the CPU and shown in the table.
void check_claims(const std::string& op, const std::map<int, Figures>& v, const device::Sizes& s, Claims& claims) {
  for (const auto& [version, f] : v) {
    claims.expect(f.check.mismatches == 0, f.kernel->id() + " matches the CPU reference");
    claims.expect(f.launches >= 1, f.kernel->id() + " left a trace");
  }
  const auto has = [&](int version) { return v.count(version) == 1; };
  const double N = double(s[0]), crs = double(s[1] * s[5] * s[6]);
  const device::Op& the_op = device::op(op);
  const Shape y = the_op.output_shapes(s)[0];
  if (op == "conv2d") {
    for (int version : {1, 2, 3, 4})
      if (has(version))
        claims.expect(v.at(version).global_bytes <= v.at(version).formula_bytes,
                      v.at(version).kernel->id() + "'s byte formula bounds what its instructions ask for");
    if (has(1) && has(2))
      claims.expect(v.at(2).global_bytes < v.at(1).global_bytes / 10,
                    "shared-memory tiles with their halo (v2) ask for under a tenth of the direct loops' (v1) bytes");
    if (has(3)) {
      const double col = crs * double(y[2] * y[3]) * 4;  // one image's column matrix, (C·R·S, P·Q) floats
      const Part* im2col = part_named(v.at(3), "conv2d_im2col");
      claims.expect(im2col && im2col->launches == int(N) && im2col->store_bytes == N * col,
                    "im2col runs once per image and writes C·R·S·P·Q floats for each");
      claims.expect(v.at(3).workspace == int64_t(col), "v3's workspace is one image's column matrix, C·R·S·P·Q floats");
    }
    if (has(3) && has(4)) {
      claims.expect(v.at(4).global_bytes < v.at(3).global_bytes,
                    "implicit GEMM (v4) asks for fewer global bytes than im2col + GEMM (v3)");
      claims.expect(v.at(4).workspace == 0 && v.at(4).launches == 1, "implicit GEMM needs no workspace and one launch");
    }
  }
  if ((op == "conv2d_dgrad" || op == "conv2d_wgrad") && has(1) && has(2))
    claims.expect(v.at(2).global_bytes < v.at(1).global_bytes / 10,
                  op + ": the implicit GEMM (v2) asks for under a tenth of the direct version's bytes");
}

}  // namespace

void trace_ladder(const device::Sizes& sizes, bool markdown, Claims& claims) {
  simt::set_workers(1);  // blocks in order: the same trace every run
  std::map<std::string, std::map<int, Figures>> by_op;
  std::vector<std::string> ops;  // in registry order
  for (const device::Kernel* k : device::kernels(device::Copy::traced)) {
    if (k->op.rfind("conv2d", 0) != 0) continue;
    if (std::find(ops.begin(), ops.end(), k->op) == ops.end()) ops.push_back(k->op);
    if (!k->emulator) {
      if (!markdown) std::printf("  %s runs only on a GPU (%s); not traced\n", k->id().c_str(), k->precision.c_str());
      continue;
    }
    by_op[k->op].emplace(k->version, trace(*k, sizes));
  }
  // Forward ops first, then the backward ones ("..._dgrad", "..._wgrad").
  std::stable_partition(ops.begin(), ops.end(),
                        [](const std::string& op) { return op.find("grad") == std::string::npos; });
  for (const std::string& op : ops) {
    std::vector<Figures> rows;
    for (const auto& [version, f] : by_op[op]) rows.push_back(f);
    print_table(op, rows, markdown);
    check_claims(op, by_op[op], sizes, claims);
  }
  if (markdown)
    std::printf(
        "\nTraced on the emulator at %s (`build/bin/lesson05 --markdown`); counts, not times, so any machine "
        "prints the same tables.\n",
        device::describe_sizes(device::op("conv2d"), sizes).c_str());
}

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
      if (op.value("op", "").rfind("conv2d", 0) != 0 || !field(op, "gpu").contains("kernels")) continue;
      std::printf("\n**%s** (sm_%s, driver %s), %s, `%s`, %s %s:\n\n", gpu.value("name", "?").c_str(),
                  gpu.value("compute_capability", "?").c_str(), gpu.value("driver", "?").c_str(),
                  record.value("date", "?").c_str(), fs::relative(file, WARPNET_SOURCE_DIR).c_str(),
                  op.value("op", "?").c_str(), field(op, "sizes").dump().c_str());
      lesson::print_gpu_kernel_table(op, "version 0");
      ++tables;
    }
    if (tables > before) lesson::print_cpu_column_note(record);
  });
  if (!tables)
    std::printf(
        "\nNo GPU has run the convolutions yet: bench/results/ holds no `warpnet bench` record of a conv op "
        "from a GPU. Figures appear here from `scripts/gpu-check.sh` on a real one; they are never "
        "estimated.\n");
}

}  // namespace warpnet::lesson05
