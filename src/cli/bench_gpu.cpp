// The GPU half of `warpnet bench` (bench.hpp), and the figures both halves
// share: deviations from a reference, timing summaries (peaks and ratios are
// bench_table.cpp's; the error bounds are device::relative_bound and
// relative_bound_of, run.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

#include "cli/bench.hpp"
#include "core/stats.hpp"
#include "device/run.hpp"
#include "simt/minifloat.hpp"

namespace warpnet::cli::bench {

Deviation deviation(const std::vector<Tensor>& got, const std::vector<Tensor>& ref) {
  WN_CHECK(got.size() == ref.size(), "bench: ", got.size(), " outputs, the reference has ", ref.size());
  Deviation d;
  for (size_t o = 0; o < got.size(); ++o) {
    WN_CHECK(got[o].numel() == ref[o].numel(), "bench: output ", o, " has ", got[o].numel(), " elements, the reference ",
             ref[o].numel());
    const Tensor g = got[o].to(DType::f64), r = ref[o].to(DType::f64);
    const double *pg = g.data<double>(), *pr = r.data<double>();
    double diff2 = 0, ref2 = 0;
    for (int64_t i = 0; i < g.numel(); ++i) {
      if (!std::isfinite(pg[i])) {
        ++d.not_finite;
        continue;
      }
      diff2 += (pg[i] - pr[i]) * (pg[i] - pr[i]);
      ref2 += pr[i] * pr[i];
    }
    d.relative = std::max(d.relative, std::sqrt(diff2 / std::max(ref2, 1e-300)));
  }
  if (d.not_finite) d.relative = NAN;
  return d;
}

nlohmann::json timing_json(std::vector<double> ms) {
  if (ms.empty()) return nullptr;
  std::sort(ms.begin(), ms.end());
  return {{"median_ms", median(ms)}, {"min_ms", ms.front()}, {"max_ms", ms.back()}, {"runs", ms.size()}};
}

std::string input_format_name(const device::Kernel& kernel) {
  const simt::Minifloat* f = kernel.input_format;
  if (!f) return "fp32";
  auto same = [&](const simt::Minifloat& g) { return f->exponent == g.exponent && f->mantissa == g.mantissa; };
  if (same(simt::kHalf)) return "fp16";
  if (same(simt::kBfloat16)) return "bf16";
  if (same(simt::kE4M3)) return "e4m3";
  if (same(simt::kE5M2)) return "e5m2";
  return cat("e", f->exponent, "m", f->mantissa);
}

nlohmann::json info_json(const device::gpu::Info& info) {
  if (!info.usable) return {{"usable", false}, {"why_not", info.why_not}};
  return {{"usable", true},
          {"name", info.name},
          {"compute_capability", cat(info.cc_major, ".", info.cc_minor)},
          {"multiprocessors", info.multiprocessors},
          {"clock_ghz", info.clock_ghz},
          {"l2_bytes", info.l2_bytes},
          {"memory_gib", info.memory_gib},
          {"memory_peak_gbps_from_bus", info.memory_bus_gbps},
          {"driver", info.driver},
          {"runtime", info.runtime},
          {"cublas", info.cublas}};
}

namespace {

// One JSON object per line, flushed at once: the parent reads the file while
// we run, and whatever we wrote survives a crash.
class Events {
 public:
  explicit Events(const std::string& path) : file_(std::fopen(path.c_str(), "a")) {
    WN_CHECK(file_, "bench worker: cannot write ", path);
  }
  ~Events() { std::fclose(file_); }
  void emit(const nlohmann::json& j) {
    const std::string line = j.dump() + "\n";
    std::fwrite(line.data(), 1, line.size(), file_);
    std::fflush(file_);
  }

 private:
  FILE* file_;
};

uint64_t mix(uint64_t seed, const std::string& text) {
  uint64_t h = seed ^ 0x9E3779B97F4A7C15ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

// The kernel against the CPU reference at every test size of its op (every
// layout included): what tests/gpu does, repeated here so a record never
// holds a timing of a kernel that computes something else. A vendor's
// library (version 0) may refuse a test size outright (cuDNN finding no
// algorithm for a shape): that size is listed as unsupported, not failed,
// so the vendor is still checked at the others and timed as the yardstick.
// warpnet's own versions must take every size: a refusal fails them.
nlohmann::json check_test_sizes(const device::Kernel& kernel, const Settings& s) {
  const device::Op& op = device::op(kernel.op);
  const device::gpu::ProfilerPause not_profiled;  // a profile is of the benchmarked size's launches
  nlohmann::json j = {{"sizes_checked", 0}, {"failed", 0}, {"worst_ratio", 0.0}};
  for (const device::Sizes& sizes : op.test_sizes) {
    Rng rng(mix(s.seed, kernel.id() + device::describe_sizes(op, sizes)));
    const auto inputs = device::make_inputs(kernel, sizes, rng);
    std::vector<Tensor> got;
    try {
      got = device::gpu::run(kernel, sizes, inputs, s.timeout_s);
    } catch (const device::gpu::Failure& f) {
      if (kernel.version != 0 || f.context_lost) throw;
      j["unsupported"].push_back(cat(device::describe_sizes(op, sizes), ": ", f.what()));
      continue;
    }
    const device::Comparison c = device::compare(kernel, sizes, inputs, got);
    j["sizes_checked"] = j["sizes_checked"].get<int>() + 1;
    j["worst_ratio"] = std::max(j["worst_ratio"].get<double>(), c.worst_ratio);
    if (c.mismatches && j["failed"].get<int>() == 0)
      j["first_failure"] = cat(device::describe_sizes(op, sizes), ": ", c.mismatches, " of ", c.checked, " wrong\n", c.first);
    if (c.mismatches) j["failed"] = j["failed"].get<int>() + 1;
  }
  if (j["sizes_checked"].get<int>() == 0 && j.contains("unsupported")) {  // nothing checked: not a yardstick
    j["failed"] = 1;
    j["first_failure"] = "the library refused every test size (unsupported)";
  }
  return j;
}

struct Group {  // the kernels that read one input format and write one output format, version 0 first
  const simt::Minifloat* format;
  const simt::Minifloat* output_format;
  std::vector<const device::Kernel*> kernels;
};

}  // namespace

int gpu_worker(const std::string& op_name, const device::Sizes& sizes, const std::vector<std::string>& kernel_ids,
               const Settings& s, const std::string& out_path) {
  Events events(out_path);
  const device::gpu::Info info = device::gpu::probe();
  events.emit({{"type", "device"}, {"device", info_json(info)}});
  if (!info.usable) return 0;
  try {
    events.emit({{"type", "copy"}, {"gbps", device::gpu::copy_bandwidth_gbps()}});
  } catch (const device::gpu::Failure& f) {
    events.emit({{"type", "copy"}, {"error", f.what()}});
    if (f.context_lost) return 3;
  }
  const device::Op& op = device::op(op_name);
  std::vector<Group> groups;
  for (const std::string& id : kernel_ids) {
    const device::Kernel* k = &device::find_kernel(id, device::Copy::cuda);
    auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.format == k->input_format && g.output_format == k->output_format;
    });
    if (g == groups.end()) g = groups.insert(groups.end(), Group{k->input_format, k->output_format, {}});
    g->kernels.push_back(k);
  }
  for (Group& g : groups)
    std::stable_sort(g.kernels.begin(), g.kernels.end(), [](auto* a, auto* b) { return a->version < b->version; });

  const double flops = groups.empty() ? 0 : groups.front().kernels.front()->flops(sizes);
  // Past about 1024^3 the float64 CPU reference takes too long: compare with
  // version 0 on the same inputs instead (itself checked at the test sizes).
  const bool cpu_reference = flops <= 2.2e9;

  for (Group& g : groups) {
    Rng rng(mix(s.seed, "bench inputs " + input_format_name(*g.kernels.front())));
    const std::vector<Tensor> inputs = device::make_inputs(*g.kernels.front(), sizes, rng);
    // The least any version moves: each input read once and each output
    // written once, in the group's input format.
    double bytes_least = 0;
    for (const Tensor& t : inputs) bytes_least += double(device::device_bytes(*g.kernels.front(), t).size());
    for (const Shape& shape : op.output_shapes(sizes))
      bytes_least += double(device::output_element_bytes(*g.kernels.front())) * double(shape.numel());
    const std::vector<Tensor> reference = cpu_reference ? op.reference(sizes, inputs) : std::vector<Tensor>{};
    std::vector<Tensor> vendor;  // version 0's outputs, once checked
    std::string vendor_id;
    const device::Kernel* vendor_timed = nullptr;  // version 0, once its timing succeeded
    int others_timed = 0;                          // the group's other versions timed
    double vendor_bound = 0;
    std::unique_ptr<device::gpu::Problem> made;
    try {
      made = std::make_unique<device::gpu::Problem>(*g.kernels.front(), sizes, inputs);
    } catch (const device::gpu::Failure& f) {  // out of memory, say: every kernel of the group fails
      for (const device::Kernel* k : g.kernels)
        events.emit({{"type", "result"}, {"kernel", k->id()}, {"status", "failed"}, {"error", f.what()},
                     {"context_lost", f.context_lost}});
      if (f.context_lost) return 3;
      continue;
    }
    device::gpu::Problem& problem = *made;
    for (const device::Kernel* k : g.kernels) {
      events.emit({{"type", "start"}, {"kernel", k->id()}});
      nlohmann::json r = {{"type", "result"}, {"kernel", k->id()}, {"status", "failed"}, {"bytes_least", bytes_least}};
      try {
        if (k->tune) r["tuned"] = k->tune(sizes);  // before the check: the size's own choice is checked and timed
        if (k->candidate) r["candidate"] = k->candidate(sizes);  // what it runs at this size
        nlohmann::json verify = {{"test_sizes", check_test_sizes(*k, s)}};
        const double wall = problem.run(*k, s.timeout_s);
        const std::vector<Tensor> out = problem.outputs();
        bool ok = verify["test_sizes"]["failed"].get<int>() == 0;
        if (cpu_reference || !vendor_id.empty()) {
          const Deviation d = deviation(out, cpu_reference ? reference : vendor);
          // Each result is within its own bound of the truth (relative_bound_of), so
          // two differ by at most the sum of their bounds.
          const double own = device::relative_bound_of(*k, sizes);
          const double limit = cpu_reference ? own : own + vendor_bound;
          verify["reference"] = cpu_reference ? "CPU float64 reference, same inputs"
                                               : vendor_id + " on the same inputs (checked against the CPU at the test sizes)";
          verify["relative_error"] = std::isnan(d.relative) ? nlohmann::json(nullptr) : nlohmann::json(d.relative);
          verify["bound"] = limit;
          // A bound near the reference's own norm, which an all-zero result
          // matches (the fp32 worst case past K = 2^21): say so.
          if (limit >= 0.5)
            verify["bound_note"] =
                cat("the bound, ", limit, ", nears the reference's norm over ",
                    op.reduction_length ? op.reduction_length(sizes) : 1,
                    " terms: at this size the check stops NaN and gross errors only; the element-wise checks at the "
                    "test sizes (verify.test_sizes) are the kernel's real check");
          verify["not_finite"] = d.not_finite;
          ok = ok && d.not_finite == 0 && d.relative <= limit;
        } else {
          const Deviation d = deviation(out, out);
          verify["reference"] = "none at this size (checked against the CPU at the test sizes; every element written)";
          verify["not_finite"] = d.not_finite;
          ok = ok && d.not_finite == 0;
        }
        verify["ok"] = ok;
        r["verify"] = verify;
        if (k->version == 0 && ok && vendor_id.empty())
          vendor = out, vendor_id = k->id(), vendor_bound = device::relative_bound_of(*k, sizes);
        if (!ok) {
          r["status"] = "wrong";
          r["error"] = "not timed: the result does not match the reference";
        } else {
          // Warm-up: a few runs for short kernels, none past the first for
          // long ones (the check above already ran it once).
          const int warmup = wall > 0.25 ? 0 : std::clamp(int(0.05 / std::max(wall, 1e-5)), 1, 10);
          r["timing"] = timing_json(problem.time(*k, warmup, s.runs, s.min_runs, s.budget_s, s.timeout_s));
          r["status"] = "ok";
          if (k->id() == vendor_id)
            vendor_timed = k;
          else
            ++others_timed;
        }
      } catch (const device::gpu::Failure& f) {
        r["error"] = f.what();
        r["context_lost"] = f.context_lost;
        events.emit(r);
        if (f.context_lost) return 3;
        continue;
      } catch (const std::exception& e) {
        r["error"] = e.what();
      }
      events.emit(r);
    }
    // The yardstick once more, after the group's versions (timed first, then
    // each version in turn): a clock or temperature that drifted during the
    // group shows, and the ratios take the vendor's faster median of the two
    // (add_ratios), never the one that flatters the versions.
    if (vendor_timed && others_timed > 0) {
      try {
        events.emit({{"type", "vendor_again"},
                     {"kernel", vendor_timed->id()},
                     {"timing", timing_json(problem.time(*vendor_timed, 1, s.runs, s.min_runs, s.budget_s, s.timeout_s))}});
      } catch (const device::gpu::Failure& f) {
        if (f.context_lost) return 3;
      } catch (const std::exception&) {
        // The first timing stands alone; the ratios use it.
      }
    }
  }
  return 0;
}

}  // namespace warpnet::cli::bench
