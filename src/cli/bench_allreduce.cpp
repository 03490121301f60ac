// `warpnet bench allreduce`: see bench_allreduce.hpp.
//
// What is timed is the path data-parallel training takes: an in-place f32
// sum started with MPI_Iallreduce and completed by MPI_Testall
// (dist::start_allreduce_sum + wait). Each run starts after a barrier, so
// the time of one run is one all-reduce from a common start (with the
// barrier's exit skew, about a microsecond); a size's time is the median of
// its runs on each rank, the largest over the ranks. Buffers are allocated
// and touched once, so no run pays page faults; every size is checked
// (each rank contributes rank+1, every element must be n(n+1)/2) before it
// is timed.
//
// Reproduce: mpirun --oversubscribe --allow-run-as-root -np 2 warpnet bench allreduce --json allreduce.json
#include "cli/bench_allreduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "cli/machine.hpp"
#include "core/error.hpp"
#include "dist/communicator.hpp"
#include "dist/cost_model.hpp"
#include "nn/models.hpp"

namespace warpnet::cli::bench {

namespace {

using nlohmann::json;

std::string bytes_text(double bytes) {
  char buf[32];
  if (bytes >= double(1 << 30)) std::snprintf(buf, sizeof buf, "%.0f GiB", bytes / double(1 << 30));
  else if (bytes >= double(1 << 20)) std::snprintf(buf, sizeof buf, "%.0f MiB", bytes / double(1 << 20));
  else if (bytes >= 1024) std::snprintf(buf, sizeof buf, "%.0f KiB", bytes / 1024);
  else std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  return buf;
}

struct Measured {
  double bytes = 0;
  int64_t runs = 0;
  double median_s = 0, min_s = 0;  // largest over the ranks
  int64_t wrong = 0;               // elements of the check that were not n(n+1)/2, summed over ranks
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Measured measure(std::vector<float>& buffer, int64_t bytes, const AllreduceSettings& s) {
  const int n = dist::size();
  const int64_t count = bytes / int64_t(sizeof(float));
  float* data = buffer.data();
  Measured m;
  m.bytes = double(count) * sizeof(float);
  dist::set_activity(cat("bench allreduce, ", bytes, " bytes"));
  // Check: rank r contributes r+1; the sum is n(n+1)/2, exact in f32.
  std::fill(data, data + count, float(dist::rank() + 1));
  dist::allreduce_sum(data, count);
  const float want = float(n * (n + 1) / 2);
  double wrong = double(std::count_if(data, data + count, [want](float x) { return x != want; }));
  dist::allreduce_sum(&wrong, 1);
  m.wrong = static_cast<int64_t>(wrong);
  std::fill(data, data + count, 0.0f);  // sums of zeros stay zero, however many runs
  auto one_run = [&] {
    dist::barrier();
    const double t0 = dist::wtime();
    dist::allreduce_sum(data, count);
    return dist::wtime() - t0;
  };
  one_run();
  one_run();
  // Rank 0 chooses how many runs fill the budget; every rank runs as many.
  std::vector<double> probe{one_run(), one_run(), one_run()};
  int64_t runs = std::clamp<int64_t>(int64_t(s.budget_s / std::max(median(probe), 1e-9)), s.min_runs, s.max_runs);
  dist::broadcast(&runs, sizeof runs);
  std::vector<double> times;
  for (int64_t i = 0; i < runs; ++i) times.push_back(one_run());
  double stats[2] = {median(times), *std::min_element(times.begin(), times.end())};
  dist::allreduce_max(stats, 2);
  m.runs = runs;
  m.median_s = stats[0];
  m.min_s = stats[1];
  return m;
}

double rel_error(double model, double measured) { return (model - measured) / measured; }

json line_json(const dist::Line& l, int n) {
  return {{"latency_s", l.a}, {"seconds_per_byte", l.b}, {"ring_bytes_per_s", dist::ring_bandwidth_of(l, n)}};
}

// The model fitted without sample i, predicting sample i.
template <class Fit>
double leave_one_out(const std::vector<dist::Sample>& samples, size_t i, Fit&& fit) {
  std::vector<dist::Sample> rest;
  for (size_t j = 0; j < samples.size(); ++j)
    if (j != i) rest.push_back(samples[j]);
  return rel_error(fit(rest).at(samples[i].bytes), samples[i].seconds);
}

json predictions(const AllreduceSettings& s) {
  struct Case {
    std::string what;
    double params;
    int grad_bytes;
  };
  std::vector<Case> cases;
  if (s.params > 0) {
    cases.push_back({cat(s.params, " parameters"), s.params, s.grad_bytes});
  } else {
    const double lenet = double(nn::make_model("lenet5", Shape({1, 28, 28}), 10, 1)->parameter_count());
    cases.push_back({"LeNet-5 (f32 gradients)", lenet, 4});
    cases.push_back({"an example: 1e9 parameters, bf16 gradients", 1e9, 2});
  }
  const double compute_s = s.compute_ms * 1e-3;
  json out = json::array();
  std::printf("\npredicted all-reduce time per training step (alpha-beta model, peak link bandwidth: real runs "
              "reach less)\n");
  for (const Case& c : cases) {
    const double bytes = c.params * c.grad_bytes;
    std::printf("\n  %s: %s of gradients%s\n", c.what.c_str(), bytes_text(bytes).c_str(),
                compute_s > 0 ? cat(", compute ", s.compute_ms, " ms per step").c_str() : "");
    std::printf("  %-10s %5s %12s %12s %6s %10s", "link", "GPUs", "ring", "tree", "best", "busbw GB/s");
    if (compute_s > 0) std::printf(" %12s %12s", "eff. serial", "eff. overlap");
    else std::printf("   compute for 90%% efficiency (no overlap)");
    std::printf("\n");
    for (const dist::Interconnect& link : dist::interconnects())
      for (int g : s.gpus) {
        if (g > link.max_gpus || g < 2) continue;
        const double ring = dist::allreduce_seconds(dist::Algorithm::ring, dist::alpha_beta(link, dist::Algorithm::ring), g, bytes);
        const double tree = dist::allreduce_seconds(dist::Algorithm::tree, dist::alpha_beta(link, dist::Algorithm::tree), g, bytes);
        const dist::StepPrediction p = dist::predict_step(link, g, bytes, compute_s);
        std::printf("  %-10s %5d %9.1f us %9.1f us %6s %10.1f", link.name.c_str(), g, ring * 1e6, tree * 1e6,
                    p.algorithm == dist::Algorithm::ring ? "ring" : "tree",
                    dist::bus_bandwidth(bytes, p.allreduce_s, g) / 1e9);
        if (compute_s > 0) std::printf(" %11.1f%% %11.1f%%", 100 * p.efficiency_no_overlap, 100 * p.efficiency_overlap);
        else std::printf("   %.2f ms", 9 * p.allreduce_s * 1e3);
        std::printf("\n");
        json row = {{"case", c.what},          {"gradient_bytes", bytes},       {"link", link.name},
                    {"gpus", g},               {"ring_s", ring},                {"tree_s", tree},
                    {"allreduce_s", p.allreduce_s}, {"algorithm", p.algorithm == dist::Algorithm::ring ? "ring" : "tree"}};
        if (compute_s > 0) {
          row["compute_s"] = compute_s;
          row["step_no_overlap_s"] = p.step_no_overlap_s;
          row["step_overlap_s"] = p.step_overlap_s;
          row["efficiency_no_overlap"] = p.efficiency_no_overlap;
          row["efficiency_overlap"] = p.efficiency_overlap;
        } else {
          row["compute_for_90_percent_s"] = 9 * p.allreduce_s;
        }
        out.push_back(row);
      }
  }
  std::printf("\n  links:\n");
  for (const dist::Interconnect& link : dist::interconnects())
    std::printf("    %-8s %s: %.1f GB/s each way per GPU, alpha0 %.1f us, alpha %.1f us/ring step, %.1f us/tree hop, "
                "up to %d GPUs\n             (%s)\n",
                link.name.c_str(), link.description.c_str(), link.bytes_per_s / 1e9, link.alpha0_s * 1e6,
                link.alpha_ring_s * 1e6, link.alpha_tree_s * 1e6, link.max_gpus, link.source.c_str());
  return out;
}

}  // namespace

json bench_allreduce(const AllreduceSettings& s) {
  WN_CHECK(s.min_bytes >= 4 && s.max_bytes >= s.min_bytes, "bench allreduce: sizes ", s.min_bytes, "..", s.max_bytes,
           " bytes");
  std::optional<dist::Session> session;
  if (dist::mpi_available()) session.emplace(60.0);
  const int n = dist::size();
  json record = machine_record();
  record["benchmark"] = "warpnet bench allreduce";
  record["ranks"] = n;
  record["ranks_on_this_machine"] = dist::local_size();
  record["mpi"] = dist::mpi_library();
  record["timing"] = "in-place f32 sum, MPI_Iallreduce + MPI_Testall (the training path); a barrier before each "
                     "run; per size the median over runs on each rank, the largest over ranks";
  if (n < 2) {
    std::printf("warpnet bench allreduce: %s; the measurement needs ranks: "
                "mpirun --oversubscribe --allow-run-as-root -np 2 warpnet bench allreduce\n",
                dist::mpi_available() ? "one rank" : "this warpnet was built without MPI");
    record["predictions"] = predictions(s);
    return record;
  }
  const bool talk = dist::rank() == 0;
  if (talk)
    std::printf("warpnet bench allreduce: %d ranks, %d on this machine (%s); f32 sum in place through "
                "MPI_Iallreduce + MPI_Testall, the path training takes\n\n"
                "  %10s %7s %11s %10s %10s %7s | %11s %8s | %11s %8s\n",
                n, dist::local_size(), dist::mpi_library().c_str(), "bytes", "runs", "median us", "algbw GB/s",
                "busbw GB/s", "check", "1 line us", "error", "regimes us", "error");
  std::vector<float> buffer(static_cast<size_t>(s.max_bytes / int64_t(sizeof(float))), 0.0f);
  std::vector<Measured> rows;
  for (int64_t bytes = s.min_bytes; bytes <= s.max_bytes; bytes *= 2) {
    rows.push_back(measure(buffer, bytes, s));
    const Measured& m = rows.back();
    if (talk) {
      std::printf("  %10.0f %7lld %11.1f %10.3f %10.3f %7s\n", m.bytes, static_cast<long long>(m.runs), m.median_s * 1e6,
                  m.bytes / m.median_s / 1e9, dist::bus_bandwidth(m.bytes, m.median_s, n) / 1e9,
                  m.wrong == 0 ? "ok" : "WRONG");
      std::fflush(stdout);
    }
  }
  dist::barrier();
  if (!talk) return json();

  // The model, fitted: one line for every size, then a line per regime.
  std::vector<dist::Sample> samples;
  for (const Measured& m : rows) samples.push_back({m.bytes, m.median_s});
  auto fit1 = [](const std::vector<dist::Sample>& v) { return dist::fit_line(v); };
  auto fit3 = [](const std::vector<dist::Sample>& v) { return dist::fit_regimes(v, 3); };
  const dist::Line line = fit1(samples);
  const dist::Regimes regimes = fit3(samples);
  std::printf("\n  model vs measurement (error = model/measured - 1; leave-one-out: fitted without that size)\n"
              "  %10s %11s | %11s %8s %8s | %11s %8s %8s\n",
              "bytes", "measured us", "1 line us", "error", "l-o-o", "regimes us", "error", "l-o-o");
  json table = json::array();
  int within_line = 0, within_regimes = 0, within_loo = 0;
  double worst_line = 0, worst_regimes = 0, worst_loo = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Measured& m = rows[i];
    const double e1 = rel_error(line.at(m.bytes), m.median_s), e3 = rel_error(regimes.at(m.bytes), m.median_s);
    const double l1 = leave_one_out(samples, i, fit1), l3 = leave_one_out(samples, i, fit3);
    within_line += std::abs(e1) <= 0.25;
    within_regimes += std::abs(e3) <= 0.25;
    within_loo += std::abs(l3) <= 0.25;
    worst_line = std::max(worst_line, std::abs(e1));
    worst_regimes = std::max(worst_regimes, std::abs(e3));
    worst_loo = std::max(worst_loo, std::abs(l3));
    std::printf("  %10.0f %11.1f | %11.1f %7.1f%% %7.1f%% | %11.1f %7.1f%% %7.1f%%\n", m.bytes, m.median_s * 1e6,
                line.at(m.bytes) * 1e6, 100 * e1, 100 * l1, regimes.at(m.bytes) * 1e6, 100 * e3, 100 * l3);
    table.push_back({{"bytes", m.bytes},
                     {"runs", m.runs},
                     {"median_s", m.median_s},
                     {"min_s", m.min_s},
                     {"algbw_bytes_per_s", m.bytes / m.median_s},
                     {"busbw_bytes_per_s", dist::bus_bandwidth(m.bytes, m.median_s, n)},
                     {"check", m.wrong == 0 ? "ok" : cat(m.wrong, " wrong elements")},
                     {"model_line_s", line.at(m.bytes)},
                     {"model_line_error", e1},
                     {"model_line_loo_error", l1},
                     {"model_regimes_s", regimes.at(m.bytes)},
                     {"model_regimes_error", e3},
                     {"model_regimes_loo_error", l3}});
  }
  const int sizes = static_cast<int>(rows.size());
  std::printf("\n  one alpha-beta line for all sizes: latency %.2f us, ring bandwidth B = %.2f GB/s; within 25%% at "
              "%d of %d sizes (worst %.0f%%)\n",
              line.a * 1e6, dist::ring_bandwidth_of(line, n) / 1e9, within_line, sizes, 100 * worst_line);
  json regime_json = json::array();
  for (size_t k = 0; k < regimes.lines.size(); ++k) {
    const double from = k == 0 ? 0 : regimes.upper[k - 1];
    const double to = k < regimes.upper.size() ? regimes.upper[k] : 0;
    std::printf("  regime %zu, %s%s: latency %.2f us, B = %.2f GB/s\n", k + 1,
                from > 0 ? cat("from ", bytes_text(from)).c_str() : "from the smallest",
                to > 0 ? cat(" below ", bytes_text(to)).c_str() : " up", regimes.lines[k].a * 1e6,
                dist::ring_bandwidth_of(regimes.lines[k], n) / 1e9);
    json r = line_json(regimes.lines[k], n);
    r["from_bytes"] = from;
    r["below_bytes"] = to > 0 ? json(to) : json(nullptr);
    regime_json.push_back(r);
  }
  std::printf("  a line per regime: within 25%% at %d of %d sizes (worst %.0f%%); predicting each size from the "
              "others: within 25%% at %d of %d (worst %.0f%%)\n",
              within_regimes, sizes, 100 * worst_regimes, within_loo, sizes, 100 * worst_loo);
  record["rows"] = table;
  record["fit"] = {{"line", line_json(line, n)},
                   {"line_within_25_percent", within_line},
                   {"regimes", regime_json},
                   {"regimes_within_25_percent", within_regimes},
                   {"regimes_leave_one_out_within_25_percent", within_loo},
                   {"sizes", sizes}};
  record["predictions"] = predictions(s);
  return record;
}

}  // namespace warpnet::cli::bench
