#include "dist/loopback_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace warpnet::dist {

namespace {

// The line a prediction needs, or an error that names what was not calibrated.
const Line& calibrated(const std::optional<Line>& line, double message_bytes, const char* what) {
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

// The sizes in (lo, hi] that need a cut, ascending (see regime_bounds).
void cut_regime(const std::vector<Sample>& exchange, const std::vector<Sample>& reduce, double lo, double hi,
                double tolerance, std::vector<double>& cuts) {
  const std::vector<Sample> x = within(exchange, lo, hi), r = within(reduce, lo, hi);
  std::vector<double> sizes;
  for (const std::vector<Sample>* v : {&x, &r})
    for (const Sample& s : *v) sizes.push_back(s.bytes);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (sizes.size() < 2 || std::max(worst_miss(x), worst_miss(r)) <= tolerance) return;
  double best_cut = sizes.front(), best_miss = INFINITY;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    const double c = sizes[i];
    const double miss = std::max({worst_miss(within(x, lo, c)), worst_miss(within(x, c, hi)),
                                  worst_miss(within(r, lo, c)), worst_miss(within(r, c, hi))});
    if (miss < best_miss) best_cut = c, best_miss = miss;
  }
  cut_regime(exchange, reduce, lo, best_cut, tolerance, cuts);
  cuts.push_back(best_cut);
  cut_regime(exchange, reduce, best_cut, hi, tolerance, cuts);
}

}  // namespace

size_t LoopbackModel::regime_index(double m) const {
  size_t k = 0;
  while (k < regime_bounds.size() && m > regime_bounds[k]) ++k;
  return k;
}

double LoopbackModel::exchange_seconds(double m) const {
  if (eager(m)) return calibrated(exchange_eager, m, "eager exchanges").at(m);
  return calibrated(exchange_rendezvous.at(regime_index(m)), m, "rendezvous exchanges").at(m);
}

double LoopbackModel::reduce_seconds(double m) const {
  return calibrated(reduce.at(regime_index(m)), m, "reductions").at(m);
}

double LoopbackModel::first_exchange_seconds(int n, double m) const {
  if (n * m < kMmapThresholdBytes) return exchange_seconds(m);
  return calibrated(exchange_fresh, m, "exchanges into a freshly mapped buffer (from 32 MiB on)").at(m);
}

double LoopbackModel::ring_allreduce_seconds(int n, double bytes) const {
  WN_CHECK(n >= 1, "loopback model: ", n, " ranks");
  if (n == 1) return 0;
  const double m = bytes / n;  // libnbc gives a remainder to the first segments; sizes here divide evenly
  return 2.0 * (n - 1) * round_s + first_exchange_seconds(n, m) + (n - 1) * reduce_seconds(m) +
         (2.0 * n - 3) * exchange_seconds(m);
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
  // Eager exchanges have a line of their own; only the rendezvous ones share the regimes.
  std::vector<Sample> rendezvous;
  for (const Sample& s : t.exchange)
    if (s.bytes >= eager_limit_bytes) rendezvous.push_back(s);
  const double l2_bound = l2_bytes_total / 4;  // 4m: both ranks' send and receive buffers
  std::vector<double> bounds;
  cut_regime(rendezvous, t.reduce, 0, l2_bound, tolerance, bounds);
  bounds.push_back(l2_bound);
  cut_regime(rendezvous, t.reduce, l2_bound, INFINITY, tolerance, bounds);
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
  m.exchange_eager = fit_where(t.exchange, [&](double b) { return m.eager(b); });
  for (size_t k = 0; k <= m.regime_bounds.size(); ++k) {
    auto in_regime = [&](double b) { return m.regime_index(b) == k; };
    m.exchange_rendezvous.push_back(fit_where(t.exchange, [&](double b) { return !m.eager(b) && in_regime(b); }));
    m.reduce.push_back(fit_where(t.reduce, in_regime));
  }
  // Taken with 2 ranks' allocation size, 2m.
  m.exchange_fresh =
      fit_where(t.fresh_exchange, [](double b) { return 2 * b >= LoopbackModel::kMmapThresholdBytes; });
  return m;
}

PieceTimings without_message(const PieceTimings& t, double message_bytes) {
  PieceTimings out = t;
  for (std::vector<Sample>* v : {&out.exchange, &out.reduce, &out.fresh_exchange})
    std::erase_if(*v, [&](const Sample& s) { return s.bytes == message_bytes; });
  return out;
}

}  // namespace warpnet::dist
