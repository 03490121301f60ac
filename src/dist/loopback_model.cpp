#include "dist/loopback_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace warpnet::dist {

namespace {

// The line a prediction needs, or an error that names what was not calibrated.
const Line& calibrated(const std::optional<Line>& line, double message_bytes, const std::string& what) {
  WN_CHECK(line, "loopback model: no calibration for ", what, " at messages of ", message_bytes,
           " bytes: time the pieces at that size");
  return *line;
}

// The line through the samples `keep` accepts; none when it accepts none.
template <class Keep>
std::optional<Line> fit_where(const std::vector<Sample>& samples, Keep&& keep) {
  std::vector<Sample> chosen;
  for (const Sample& s : samples)
    if (keep(s.bytes)) chosen.push_back(s);
  if (chosen.empty()) return std::nullopt;
  return fit_line(chosen);
}

// The samples with lo < bytes <= hi.
std::vector<Sample> within(const std::vector<Sample>& samples, double lo, double hi) {
  std::vector<Sample> out;
  for (const Sample& s : samples)
    if (s.bytes > lo && s.bytes <= hi) out.push_back(s);
  return out;
}

// The largest relative miss of fit_line's line on its own samples (0 for none).
double worst_miss(const std::vector<Sample>& samples) {
  if (samples.empty()) return 0;
  const Line l = fit_line(samples);
  double worst = 0;
  for (const Sample& s : samples) worst = std::max(worst, std::abs(l.at(s.bytes) - s.seconds) / s.seconds);
  return worst;
}

// The largest worst_miss of the pieces' lines over the sizes in (lo, hi].
double worst_miss_within(const std::vector<std::vector<Sample>>& pieces, double lo, double hi) {
  double worst = 0;
  for (const std::vector<Sample>& p : pieces) worst = std::max(worst, worst_miss(within(p, lo, hi)));
  return worst;
}

// The sizes in (lo, hi] that need a cut, ascending (see regime_bounds).
void cut_regime(const std::vector<std::vector<Sample>>& pieces, double lo, double hi, double tolerance,
                std::vector<double>& cuts) {
  std::vector<double> sizes;
  for (const std::vector<Sample>& p : pieces)
    for (const Sample& s : within(p, lo, hi)) sizes.push_back(s.bytes);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (sizes.size() < 2 || worst_miss_within(pieces, lo, hi) <= tolerance) return;
  double best_cut = sizes.front(), best_miss = INFINITY;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    const double c = sizes[i];
    const double miss = std::max(worst_miss_within(pieces, lo, c), worst_miss_within(pieces, c, hi));
    if (miss < best_miss) best_cut = c, best_miss = miss;
  }
  cut_regime(pieces, lo, best_cut, tolerance, cuts);
  cuts.push_back(best_cut);
  cut_regime(pieces, best_cut, hi, tolerance, cuts);
}

// The samples at or above the eager limit.
std::vector<Sample> rendezvous_only(const std::vector<Sample>& samples, double eager_limit_bytes) {
  std::vector<Sample> out;
  for (const Sample& s : samples)
    if (s.bytes >= eager_limit_bytes) out.push_back(s);
  return out;
}

// An exchange's line at m: the eager one below the limit, its regime's above.
double exchange_at(const LoopbackModel& model, const ExchangeLines& lines, double m, const char* what) {
  if (model.eager(m)) return calibrated(lines.eager, m, cat("eager ", what)).at(m);
  return calibrated(lines.rendezvous.at(model.regime_index(m)), m, cat("rendezvous ", what)).at(m);
}

}  // namespace

size_t LoopbackModel::regime_index(double m) const {
  size_t k = 0;
  while (k < regime_bounds.size() && m > regime_bounds[k]) ++k;
  return k;
}

double LoopbackModel::exchange_seconds(double m) const { return exchange_at(*this, exchange, m, "exchanges"); }

double LoopbackModel::reduce_seconds(double m) const {
  return calibrated(reduce.at(regime_index(m)), m, "reductions").at(m);
}

double LoopbackModel::temporary_exchange_seconds(double m) const {
  return exchange_at(*this, temporary_exchange, m, "exchanges into a buffer only this rank touched");
}

double LoopbackModel::first_exchange_seconds(int n, double m) const {
  if (n * m < kMmapThresholdBytes) return temporary_exchange_seconds(m);
  return calibrated(exchange_fresh, m, "exchanges into a freshly mapped buffer (from 32 MiB on)").at(m);
}

double LoopbackModel::ring_allreduce_seconds(int n, double bytes) const {
  WN_CHECK(n >= 1, "loopback model: ", n, " ranks");
  if (n == 1) return 0;
  const double m = bytes / n;  // libnbc gives a remainder to the first segments; sizes here divide evenly
  return 2.0 * (n - 1) * round_s + first_exchange_seconds(n, m) +
         (n > 2 ? (n - 2) * temporary_exchange_seconds(m) : 0.0) + (n - 1) * reduce_seconds(m) +
         (n - 1) * exchange_seconds(m);
}

std::string LoopbackModel::regime(int n, double bytes) const {
  const double m = bytes / n;
  return cat(eager(m) ? "eager" : "rendezvous", ", regime ", regime_index(m) + 1, "/", regime_bounds.size() + 1,
             bytes >= kMmapThresholdBytes ? ", mmap" : "");
}

std::vector<double> regime_bounds(const PieceTimings& t, double eager_limit_bytes, double l2_bytes_total,
                                  double tolerance) {
  WN_CHECK(l2_bytes_total > 0, "loopback model: the L2 size must be known");
  WN_CHECK(tolerance > 0, "loopback model: the regime tolerance must be positive, not ", tolerance);
  // Eager exchanges have lines of their own; only the rendezvous ones share the regimes.
  const std::vector<std::vector<Sample>> pieces{rendezvous_only(t.exchange, eager_limit_bytes),
                                                rendezvous_only(t.temporary_exchange, eager_limit_bytes), t.reduce};
  const double l2_bound = l2_bytes_total / 4;  // 4m: both ranks' send and receive buffers
  std::vector<double> bounds;
  cut_regime(pieces, 0, l2_bound, tolerance, bounds);
  bounds.push_back(l2_bound);
  cut_regime(pieces, l2_bound, INFINITY, tolerance, bounds);
  return bounds;
}

LoopbackModel calibrate_loopback(const PieceTimings& t, double eager_limit_bytes, std::vector<double> bounds) {
  WN_CHECK(eager_limit_bytes > 0, "loopback model: the eager limit must be known");
  WN_CHECK(std::is_sorted(bounds.begin(), bounds.end()), "loopback model: regime bounds must ascend");
  LoopbackModel m;
  m.eager_limit_bytes = eager_limit_bytes;
  m.regime_bounds = std::move(bounds);
  // A barrier on 2 ranks is a libnbc schedule of one round of empty
  // messages: what it costs beyond an empty exchange is libnbc's own part
  // of a round.
  m.round_s = std::max(0.0, t.ibarrier_s - t.empty_exchange_s);
  auto fit_exchange = [&](const std::vector<Sample>& samples) {
    ExchangeLines lines;
    lines.eager = fit_where(samples, [&](double b) { return m.eager(b); });
    for (size_t k = 0; k <= m.regime_bounds.size(); ++k)
      lines.rendezvous.push_back(
          fit_where(samples, [&](double b) { return !m.eager(b) && m.regime_index(b) == k; }));
    return lines;
  };
  m.exchange = fit_exchange(t.exchange);
  m.temporary_exchange = fit_exchange(t.temporary_exchange);
  for (size_t k = 0; k <= m.regime_bounds.size(); ++k)
    m.reduce.push_back(fit_where(t.reduce, [&](double b) { return m.regime_index(b) == k; }));
  // Taken with 2 ranks' allocation size, 2m.
  m.exchange_fresh =
      fit_where(t.fresh_exchange, [](double b) { return 2 * b >= LoopbackModel::kMmapThresholdBytes; });
  return m;
}

PieceTimings without_message(const PieceTimings& t, double message_bytes) {
  PieceTimings out = t;
  for (std::vector<Sample>* v : {&out.exchange, &out.temporary_exchange, &out.reduce, &out.fresh_exchange})
    std::erase_if(*v, [&](const Sample& s) { return s.bytes == message_bytes; });
  return out;
}

}  // namespace warpnet::dist
