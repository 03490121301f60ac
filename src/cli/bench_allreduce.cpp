// `warpnet bench allreduce`: see bench_allreduce.hpp.
//
// What is timed is the path data-parallel training takes: an in-place f32
// sum started with MPI_Iallreduce and completed by MPI_Testall
// (dist::start_allreduce_sum + wait), each run after a barrier
// (time_interleaved, bench_allreduce_pieces.hpp). Buffers are allocated and
// touched once, so no run pays page faults; every size is checked (each rank
// contributes rank+1, every element must be n(n+1)/2) before it is timed.
//
// With 2 ranks, each size's pieces (exchanges, a reduction; an empty
// barrier once) are timed each on its own, in blocks that alternate with
// the all-reduce's, and dist/loopback_model.hpp predicts the all-reduce from
// the pieces alone; the table then puts prediction and measurement side by
// side. One alpha-beta line fitted to the all-reduce times themselves is
// shown too, for contrast: it cannot follow the protocol and cache regimes.
//
// Reproduce: mpirun --oversubscribe --allow-run-as-root -np 2 warpnet bench allreduce --json allreduce.json
#include "cli/bench_allreduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>

#include "cli/bench_allreduce_nccl.hpp"
#include "cli/bench_allreduce_pieces.hpp"
#include "cli/machine.hpp"
#include "core/error.hpp"
#include "core/host_memory.hpp"
#include "core/memory.hpp"
#include "dist/communicator.hpp"
#include "dist/cost_model.hpp"
#include "dist/loopback_model.hpp"
#include "dist/nccl_group.hpp"
#include "nn/models.hpp"

namespace warpnet::cli::bench {

namespace {

using nlohmann::json;

struct Measured {
  double bytes = 0;
  int64_t runs = 0;
  double median_s = 0, min_s = 0;  // largest over the ranks
  int64_t wrong = 0;               // elements of the check that were not n(n+1)/2, summed over ranks
};

// Checks the all-reduce at `bytes`, then times it: with 2 ranks interleaved
// with its pieces (appended to `pieces`), otherwise alone.
Measured measure(float* data, std::optional<PieceBuffers>& calibration, int64_t bytes,
                 const AllreduceSettings& s, dist::PieceTimings& pieces) {
  const int n = dist::size();
  const int64_t count = bytes / int64_t(sizeof(float));
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
  const TimedOp allreduce{[&] { dist::allreduce_sum(data, count); }, {}};
  const TimingBudget budget{s.budget_s, s.min_runs, s.max_runs};
  const Timing t = calibration ? time_with_pieces(*calibration, m.bytes / n, allreduce, budget, pieces)
                               : time_interleaved(budget, {allreduce})[0];
  m.runs = t.runs;
  m.median_s = t.median_s;
  m.min_s = t.min_s;
  return m;
}

double rel_error(double model, double measured) { return (model - measured) / measured; }

// The all-reduce of `bytes` predicted by the model calibrated on every other
// size's pieces: a size the model never saw. None when a line it needs had
// only this size to be fitted to (a regime of one size, say).
std::optional<double> held_out_prediction(const dist::PieceTimings& pieces, double eager_bytes, double l2_bytes_total,
                                          int n, double bytes) {
  const dist::PieceTimings rest = dist::without_message(pieces, bytes / n);
  try {
    const dist::LoopbackModel m =
        dist::calibrate_loopback(rest, eager_bytes, dist::regime_bounds(rest, eager_bytes, l2_bytes_total));
    return m.ring_allreduce_seconds(n, bytes);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::string percent(double fraction) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * fraction);
  return text;
}

json line_json(const dist::Line& l) { return {{"a_s", l.a}, {"b_s_per_byte", l.b}}; }
// A line the calibration had no size for is null.
json line_json(const std::optional<dist::Line>& l) { return l ? line_json(*l) : json(); }

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
    std::printf("\n  %s: %s of gradients%s\n", c.what.c_str(), format_bytes(int64_t(bytes)).c_str(),
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

// The model's calibration in the record: every fitted line and where its
// inputs came from.
json model_json(const dist::LoopbackModel& m, const dist::PieceTimings& t, const CacheInfo& caches, int64_t eager) {
  json pieces = json::array();
  for (size_t i = 0; i < t.exchange.size(); ++i) {
    json piece = {{"bytes", t.exchange[i].bytes},
                  {"exchange_s", t.exchange[i].seconds},
                  {"reduce_local_s", t.reduce[i].seconds}};
    for (const dist::Sample& f : t.temporary_exchange)
      if (f.bytes == t.exchange[i].bytes) piece["first_exchange_s"] = f.seconds;
    pieces.push_back(piece);
  }
  json fresh = json::array();
  for (const dist::Sample& f : t.fresh_exchange) fresh.push_back({{"bytes", f.bytes}, {"exchange_fresh_s", f.seconds}});
  auto rendezvous_json = [](const dist::ExchangeLines& x) {
    json lines = json::array();
    for (const std::optional<dist::Line>& l : x.rendezvous) lines.push_back(line_json(l));
    return lines;
  };
  json reduce = json::array();
  for (const std::optional<dist::Line>& l : m.reduce) reduce.push_back(line_json(l));
  return {{"algorithm", "Open MPI coll/libnbc ring (coll_libnbc_iallreduce_algorithm=ring): T = 2(n-1)c + F(S/n) + "
                        "(n-2)·X1(S/n) + (n-1)·R(S/n) + (n-1)·X(S/n); X1 received into the temporary buffer, F the first of them"},
          {"round_s", m.round_s},
          {"ibarrier_s", t.ibarrier_s},
          {"empty_exchange_s", t.empty_exchange_s},
          {"eager_limit_bytes", m.eager_limit_bytes},
          {"eager_limit_source", eager > 0 ? "btl_vader_eager_limit through MPI_T" : "not readable: 4096 assumed"},
          {"caches", caches.text},
          {"regime_bounds_bytes", m.regime_bounds},
          {"regime_tolerance", dist::kRegimeTolerance},
          {"exchange_eager", line_json(m.exchange.eager)},
          {"exchange_rendezvous", rendezvous_json(m.exchange)},
          {"first_exchange_eager", line_json(m.temporary_exchange.eager)},
          {"first_exchange_rendezvous", rendezvous_json(m.temporary_exchange)},
          {"reduce", reduce},
          {"exchange_fresh", line_json(m.exchange_fresh)},
          {"fresh_exchanges", fresh},
          {"pieces", pieces}};
}

// bench_allreduce's work, in a session: measures, fits and predicts.
json measure(const AllreduceSettings& s) {
  const int n = dist::size();
  // Ranks with other sizes or run counts would pair different collectives.
  if (n > 1) {
    const std::string mine = cat(s.min_bytes, '|', s.max_bytes, '|', s.budget_s, '|', s.min_runs, '|', s.max_runs);
    const std::vector<uint64_t> all = dist::allgather(std::hash<std::string>{}(mine));
    for (int r = 1; r < n; ++r)
      WN_CHECK(all[size_t(r)] == all[0], "bench allreduce: rank ", r, "'s --min-bytes, --max-bytes, --runs or "
               "--budget differ from rank 0's: every rank must run the same command");
  }
  json record = machine_record();
  record["benchmark"] = "warpnet bench allreduce";
  record["ranks"] = n;
  record["ranks_on_this_machine"] = dist::local_size();
  record["mpi"] = dist::mpi_library();
  record["timing"] = cat("in-place f32 sum, MPI_Iallreduce + MPI_Testall (the training path); a barrier before each "
                         "run; per size the median over runs on each rank, the largest over ranks; with 2 ranks the "
                         "pieces of the same size timed in ", kBlocks, " blocks alternating with the all-reduce's");
  if (n < 2) {
    std::printf("warpnet bench allreduce: %s; the measurement needs ranks: "
                "mpirun --oversubscribe --allow-run-as-root -np 2 warpnet bench allreduce\n",
                dist::mpi_available() ? "one rank" : "this warpnet was built without MPI");
    record["predictions"] = predictions(s);
    return record;
  }
  const bool talk = dist::rank() == 0;
  // The all-reduce's vector, on which the pieces run too (PieceBuffers),
  // and with 2 ranks the ring's temporary buffer after it, of max_bytes/2
  // (the segment a 2-rank ring moves), in one allocation. On the AMD EPYC VM
  // of 2026-12-03 the all-reduces of 8 and 16 MiB took 1.16-1.30x as long as
  // a hand-written ring of the same steps on memory allocated later (2 runs)
  // when their buffer was a rank's first large allocation, and 0.87-0.93x
  // when it was its second (2 runs): the pages a buffer gets matter.
  const int64_t vector_floats = s.max_bytes / int64_t(sizeof(float));
  const int64_t temporary_floats = n == 2 ? (s.max_bytes / 2) / int64_t(sizeof(float)) : 0;
  const int64_t memory_bytes = (vector_floats + temporary_floats) * int64_t(sizeof(float));
  if (const std::string why = host_allocation_refusal(memory_bytes * dist::local_size()); !why.empty())
    fail("bench allreduce: --max-bytes ", s.max_bytes, " needs ", format_bytes(memory_bytes), " on each of the ",
         dist::local_size(), " ranks on this machine: ", why);
  std::vector<float> memory(static_cast<size_t>(vector_floats + temporary_floats), 0.0f);
  std::optional<PieceBuffers> calibration;
  dist::PieceTimings pieces;
  if (n == 2) {
    calibration.emplace(memory.data(), vector_floats, memory.data() + vector_floats, temporary_floats);
    time_round_cost(*calibration, {s.budget_s, s.min_runs, s.max_runs}, pieces);
  }

  // 1. Each size: the all-reduce, and with 2 ranks its pieces, timed in
  // alternating blocks.
  if (talk) {
    std::printf("warpnet bench allreduce: %d ranks, %d on this machine (%s)\n\n"
                "  1. the all-reduce: f32 sum in place through MPI_Iallreduce + MPI_Testall, the path training takes",
                n, dist::local_size(), dist::mpi_library().c_str());
    if (calibration)
      std::printf(";\n     with the pieces of its ring at m = bytes/2, each timed on its own, in %d blocks that "
                  "alternate with the all-reduce's\n     (first x: the first exchange, into the temporary buffer; "
                  "* where glibc maps that buffer fresh)",
                  kBlocks);
    std::printf("\n  %10s %7s %11s %10s %10s %7s", "bytes", "runs", "median us", "algbw GB/s", "busbw GB/s", "check");
    if (calibration) std::printf(" | %12s %11s %11s %11s", "m bytes", "first x us", "reduce us", "exchange us");
    std::printf("\n");
  }
  std::vector<Measured> rows;
  for (int64_t bytes = s.min_bytes; bytes <= s.max_bytes; bytes *= 2) {
    rows.push_back(measure(memory.data(), calibration, bytes, s, pieces));
    const Measured& m = rows.back();
    if (talk) {
      std::printf("  %10.0f %7lld %11.1f %10.3f %10.3f %7s", m.bytes, static_cast<long long>(m.runs), m.median_s * 1e6,
                  m.bytes / m.median_s / 1e9, dist::bus_bandwidth(m.bytes, m.median_s, n) / 1e9,
                  m.wrong == 0 ? "ok" : "WRONG");
      if (calibration) {
        const double mb = pieces.exchange.back().bytes;
        const bool fresh = !pieces.fresh_exchange.empty() && pieces.fresh_exchange.back().bytes == mb;
        const double first = (fresh ? pieces.fresh_exchange : pieces.temporary_exchange).back().seconds;
        std::printf(" | %12.0f %10.2f%s %11.2f %11.2f", mb, first * 1e6, fresh ? "*" : " ",
                    pieces.reduce.back().seconds * 1e6, pieces.exchange.back().seconds * 1e6);
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }

  // On GPUs, with NCCL built in: the path training on cuda takes.
  const json nccl_rows = dist::nccl_gpus_present() ? measure_nccl(s) : json();

  // 2. The model the pieces give.
  const CacheInfo caches = read_caches();
  const int64_t eager = dist::eager_limit_bytes();
  const double eager_bytes = eager > 0 ? double(eager) : 4096.0;
  std::optional<dist::LoopbackModel> model;
  if (calibration && caches.l2_bytes > 0)
    model = dist::calibrate_loopback(
        pieces, eager_bytes, dist::regime_bounds(pieces, eager_bytes, caches.l2_bytes * dist::local_size()));
  if (talk && model) {
    std::string bounds;
    for (double b : model->regime_bounds) bounds += cat(bounds.empty() ? "" : ", ", format_bytes(int64_t(b)));
    std::printf("\n  2. the model of the ring from its pieces\n"
                "     empty exchange %.2f us, empty MPI_Ibarrier %.2f us: libnbc adds c = %.2f us to a round\n"
                "     eager limit %lld bytes (%s); caches %s\n"
                "     regimes end at messages of %s (the L2 of %d cores at %s; the others where one line would miss a "
                "piece by more than %.0f%%)\n",
                pieces.empty_exchange_s * 1e6, pieces.ibarrier_s * 1e6, model->round_s * 1e6,
                static_cast<long long>(model->eager_limit_bytes),
                eager > 0 ? "btl_vader_eager_limit, MPI_T" : "not readable, assumed", caches.text.c_str(),
                bounds.c_str(), dist::local_size(),
                format_bytes(int64_t(caches.l2_bytes) * dist::local_size() / 4).c_str(),
                100 * dist::kRegimeTolerance);
    auto show = [](const std::string& what, const std::optional<dist::Line>& l) {
      if (!l) return;  // no calibration size for it
      std::printf("     %-38s %8.2f us + %7.3f ns/B (%.2f GB/s)\n", what.c_str(), l->a * 1e6, l->b * 1e9,
                  l->b > 0 ? 1e-9 / l->b : 0.0);
    };
    std::printf("     fitted, one line per regime:\n");
    show("first exchange, eager", model->temporary_exchange.eager);
    show("exchange, eager", model->exchange.eager);
    for (size_t k = 0; k < model->reduce.size(); ++k) {
      show(cat("first exchange, rendezvous, regime ", k + 1), model->temporary_exchange.rendezvous[k]);
      show(cat("reduction, regime ", k + 1), model->reduce[k]);
      show(cat("exchange, rendezvous, regime ", k + 1), model->exchange.rendezvous[k]);
    }
    show("first exchange, fresh mapped buffer", model->exchange_fresh);
  }

  dist::barrier();
  if (!talk) return json();

  // 3. Prediction against measurement; one line fitted to the all-reduce
  // itself, for contrast.
  std::vector<dist::Sample> samples;
  for (const Measured& m : rows) samples.push_back({m.bytes, m.median_s});
  const dist::Line line = dist::fit_line(samples);
  std::printf("\n  3. predicted (from the pieces) against measured; error = predicted/measured - 1; \"left out\":\n"
              "     predicted by the model calibrated without this size's pieces, from the other sizes alone\n"
              "  %10s %11s | %11s %8s %-24s | %11s %8s | %11s %8s\n",
              "bytes", "measured us", "predicted", "error", "regime", "left out us", "error", "1 line us", "error");
  json table = json::array();
  int within = 0, within_line = 0, within_held_out = 0, held_out_no_line = 0;
  double worst = 0, worst_line = 0, worst_held_out = 0;
  const double l2_bytes_total = caches.l2_bytes * dist::local_size();
  for (const Measured& m : rows) {
    const double line_error = rel_error(line.at(m.bytes), m.median_s);
    within_line += std::abs(line_error) <= 0.25;
    worst_line = std::max(worst_line, std::abs(line_error));
    json row = {{"bytes", m.bytes},
                {"runs", m.runs},
                {"median_s", m.median_s},
                {"min_s", m.min_s},
                {"algbw_bytes_per_s", m.bytes / m.median_s},
                {"busbw_bytes_per_s", dist::bus_bandwidth(m.bytes, m.median_s, n)},
                {"check", m.wrong == 0 ? "ok" : cat(m.wrong, " wrong elements")},
                {"model_line_s", line.at(m.bytes)},
                {"model_line_error", line_error}};
    std::string predicted = "-", error = "-", regime, held_out = "-", held_out_error = "-";
    if (model) {
      const double p = model->ring_allreduce_seconds(n, m.bytes), e = rel_error(p, m.median_s);
      within += std::abs(e) <= 0.25;
      worst = std::max(worst, std::abs(e));
      regime = model->regime(n, m.bytes);
      predicted = cat(std::round(p * 1e7) / 10);
      error = percent(e);
      row["predicted_s"] = p;
      row["predicted_error"] = e;
      row["regime"] = regime;
      const std::optional<double> h = held_out_prediction(pieces, eager_bytes, l2_bytes_total, n, m.bytes);
      if (h) {
        const double he = rel_error(*h, m.median_s);
        within_held_out += std::abs(he) <= 0.25;
        worst_held_out = std::max(worst_held_out, std::abs(he));
        held_out = cat(std::round(*h * 1e7) / 10);
        held_out_error = percent(he);
        row["held_out_predicted_s"] = *h;
        row["held_out_error"] = he;
      } else {
        ++held_out_no_line;
        held_out = "no line";
        row["held_out_predicted_s"] = nullptr;
      }
    }
    std::printf("  %10.0f %11.1f | %11s %8s %-24s | %11s %8s | %11.1f %7.1f%%\n", m.bytes, m.median_s * 1e6,
                predicted.c_str(), error.c_str(), regime.c_str(), held_out.c_str(), held_out_error.c_str(),
                line.at(m.bytes) * 1e6, 100 * line_error);
    table.push_back(row);
  }
  const int sizes = static_cast<int>(rows.size());
  if (model) {
    std::printf("\n  predicted from the pieces: within 25%% of the measured time at %d of %d sizes (worst %.0f%%)\n",
                within, sizes, 100 * worst);
    std::printf("  predicted with the size's own pieces left out: within 25%% at %d of %d (worst %.0f%%; %d with no "
                "line left to predict them)\n",
                within_held_out, sizes, 100 * worst_held_out, held_out_no_line);
  }
  std::printf("  one alpha-beta line fitted to these very times: within 25%% at %d of %d (worst %.0f%%)\n",
              within_line, sizes, 100 * worst_line);
  record["rows"] = table;
  record["fit"] = {{"line", line_json(line)}, {"line_within_25_percent", within_line}, {"sizes", sizes}};
  if (model) {
    record["model"] = model_json(*model, pieces, caches, eager);
    record["model"]["within_25_percent"] = within;
    record["model"]["worst_error"] = worst;
    record["model"]["held_out_within_25_percent"] = within_held_out;
    record["model"]["held_out_worst_error"] = worst_held_out;  // over the sizes it predicted
    record["model"]["held_out_no_line"] = held_out_no_line;
  }
  if (!nccl_rows.is_null()) record["nccl_rows"] = nccl_rows;
  record["predictions"] = predictions(s);
  return record;
}

}  // namespace

json bench_allreduce(const AllreduceSettings& s) {
  WN_CHECK(s.min_bytes >= 4, "bench allreduce: --min-bytes ", s.min_bytes,
           ": a message is at least 4 bytes (one float)");
  WN_CHECK(s.min_bytes % 4 == 0 && s.max_bytes % 4 == 0, "bench allreduce: --min-bytes ", s.min_bytes,
           " and --max-bytes ", s.max_bytes, " must be whole floats (multiples of 4 bytes)");
  WN_CHECK(s.max_bytes >= s.min_bytes, "bench allreduce: --max-bytes ", s.max_bytes, " is below --min-bytes ",
           s.min_bytes, " (1024 unless given): lower --min-bytes or raise --max-bytes");
  std::optional<dist::Session> session;
  if (dist::mpi_available()) session.emplace(s.timeout_s);
  // An error on one rank ends the job with its message: left to unwind, the
  // session's MPI_Finalize would wait for ranks that wait for this one.
  try {
    return measure(s);
  } catch (const std::exception& e) {
    if (dist::size() > 1) dist::abort_job(cat("error: ", e.what()));
    throw;
  }
}

}  // namespace warpnet::cli::bench
