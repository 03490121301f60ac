// The median of timings: what warpnet's benchmarks and lessons report, since
// one slow run (another process, a page fault) moves it least.
#pragma once
#include <algorithm>
#include <vector>

#include "core/error.hpp"

namespace warpnet {

// The middle value; for an even count, the mean of the two middle ones.
inline double median(std::vector<double> v) {
  WN_CHECK(!v.empty(), "median of no values");
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace warpnet
