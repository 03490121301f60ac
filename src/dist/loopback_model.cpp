#include "dist/loopback_model.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace warpnet::dist {

size_t LoopbackModel::memory_regime(double m) const {
  size_t k = 0;
  while (k < memory_bounds.size() && m > memory_bounds[k]) ++k;
  return k;
}

double LoopbackModel::exchange_seconds(double m) const {
  return eager(m) ? exchange_eager.at(m) : exchange_rendezvous.at(memory_regime(m)).at(m);
}

double LoopbackModel::reduce_seconds(double m) const { return reduce.at(memory_regime(m)).at(m); }

double LoopbackModel::first_exchange_seconds(int n, double m) const {
  return n * m >= kMmapThresholdBytes ? exchange_fresh.at(m) : exchange_seconds(m);
}

double LoopbackModel::ring_allreduce_seconds(int n, double bytes) const {
  WN_CHECK(n >= 1, "loopback model: ", n, " ranks");
  if (n == 1) return 0;
  const double m = bytes / n;  // libnbc gives a remainder to the first segments; sizes here divide evenly
  return call_s + first_exchange_seconds(n, m) + (n - 1) * reduce_seconds(m) + (2.0 * n - 3) * exchange_seconds(m);
}

std::string LoopbackModel::regime(int n, double bytes) const {
  const double m = bytes / n;
  return cat(eager(m) ? "eager" : "rendezvous", ", memory ", memory_regime(m) + 1, "/", memory_bounds.size() + 1,
             bytes >= kMmapThresholdBytes ? ", mmap" : "");
}

std::vector<double> memory_bounds(const PieceTimings& t, double l2_bytes_total) {
  WN_CHECK(l2_bytes_total > 0, "loopback model: the L2 size must be known");
  std::vector<double> bounds{l2_bytes_total / 4};  // 4m: both ranks' send and receive buffers
  std::vector<Sample> sorted = t.exchange;
  std::sort(sorted.begin(), sorted.end(), [](const Sample& a, const Sample& b) { return a.bytes < b.bytes; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i - 1].bytes < bounds.front()) continue;  // steps inside the L2 are noise, not memory
    const double before = sorted[i - 1].bytes / sorted[i - 1].seconds, now = sorted[i].bytes / sorted[i].seconds;
    if (now <= before / 2) bounds.push_back(sorted[i - 1].bytes);
  }
  return bounds;
}

namespace {

template <class Keep>
Line fit_where(const std::vector<Sample>& samples, Keep&& keep, const std::string& what) {
  std::vector<Sample> chosen;
  for (const Sample& s : samples)
    if (keep(s.bytes)) chosen.push_back(s);
  WN_CHECK(!chosen.empty(), "loopback model: the calibration has no size for ", what);
  return fit_line(chosen);
}

}  // namespace

LoopbackModel calibrate_loopback(const PieceTimings& t, double eager_limit_bytes, std::vector<double> bounds) {
  WN_CHECK(eager_limit_bytes > 0, "loopback model: the eager limit must be known");
  WN_CHECK(std::is_sorted(bounds.begin(), bounds.end()), "loopback model: memory bounds must ascend");
  LoopbackModel m;
  m.eager_limit_bytes = eager_limit_bytes;
  m.memory_bounds = std::move(bounds);
  // A barrier is one libnbc schedule with one round of empty messages: what
  // it costs beyond an empty exchange is the cost of the call itself.
  m.call_s = std::max(0.0, t.ibarrier_s - t.empty_exchange_s);
  m.exchange_eager = fit_where(t.exchange, [&](double b) { return m.eager(b); }, "eager exchanges");
  for (size_t k = 0; k <= m.memory_bounds.size(); ++k) {
    auto in_regime = [&](double b) { return m.memory_regime(b) == k; };
    m.exchange_rendezvous.push_back(fit_where(
        t.exchange, [&](double b) { return !m.eager(b) && in_regime(b); }, cat("rendezvous exchanges, memory regime ", k + 1)));
    m.reduce.push_back(fit_where(t.reduce, in_regime, cat("reductions, memory regime ", k + 1)));
  }
  // Taken with 2 ranks' allocation size, 2m.
  m.exchange_fresh = fit_where(t.fresh_exchange, [](double b) { return 2 * b >= LoopbackModel::kMmapThresholdBytes; },
                               "exchanges into freshly mapped buffers");
  return m;
}

}  // namespace warpnet::dist
