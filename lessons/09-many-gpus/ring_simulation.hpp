// Ring all-reduce, simulated in one process so that every step can be
// printed: n ranks each hold a vector cut into n chunks; in the
// reduce-scatter each rank sends one chunk to its right neighbour, which adds
// it to its own (n-1 steps, after which rank r holds the full sum of chunk
// r+1); in the all-gather the finished chunks travel once more round the ring
// (n-1 steps) until every rank holds every sum. Values are small integers,
// so the sums are exact and the check against the direct sum is equality.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

namespace warpnet::lesson {

struct RingResult {
  bool matches_direct_sum = false;
  int steps = 0;
  int values_sent_per_rank = 0;
};

inline void print_ranks(const std::vector<std::vector<int>>& data, int chunk) {
  for (size_t r = 0; r < data.size(); ++r) {
    std::printf("      rank %zu: ", r);
    for (size_t i = 0; i < data[r].size(); ++i)
      std::printf("%s%3d", i > 0 && i % size_t(chunk) == 0 ? " |" : "", data[r][i]);
    std::printf("\n");
  }
}

// n ranks, chunks of `chunk` values (vectors of n·chunk values).
inline RingResult simulate_ring(int n, int chunk, bool print) {
  const int length = n * chunk;
  std::vector<std::vector<int>> data(n, std::vector<int>(length));
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < length; ++i) data[r][i] = (r + 1) * (i % 3 + 1);  // any small integers will do
  std::vector<int> direct(length, 0);
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < length; ++i) direct[i] += data[r][i];
  if (print) {
    std::printf("\n    start (chunks separated by |)\n");
    print_ranks(data, chunk);
  }
  RingResult result;
  std::vector<int> sent(n, 0);
  // One step: every rank r sends chunk (r - step + offset) mod n to rank r+1
  // at the same moment; `add` says whether the receiver adds or overwrites.
  auto run_step = [&](int step, int offset, bool add, const char* phase) {
    const std::vector<std::vector<int>> before = data;  // all sends of a step happen at once
    std::string moves;
    for (int r = 0; r < n; ++r) {
      const int c = ((r - step + offset) % n + n) % n;
      const int to = (r + 1) % n;
      for (int i = c * chunk; i < (c + 1) * chunk; ++i) data[to][i] = add ? data[to][i] + before[r][i] : before[r][i];
      sent[r] += chunk;
      moves += std::string(moves.empty() ? "" : ", ") + std::to_string(r) + "->" + std::to_string(to) + " chunk " +
               std::to_string(c);
    }
    ++result.steps;
    if (print) {
      std::printf("\n    %s step %d: %s\n", phase, step + 1, moves.c_str());
      print_ranks(data, chunk);
    }
  };
  for (int step = 0; step < n - 1; ++step) run_step(step, 0, true, "reduce-scatter");
  // After it, rank r holds the full sum of chunk r+1: it sends that first.
  for (int step = 0; step < n - 1; ++step) run_step(step, 1, false, "all-gather");
  result.matches_direct_sum = true;
  for (int r = 0; r < n; ++r) result.matches_direct_sum = result.matches_direct_sum && data[r] == direct;
  result.values_sent_per_rank = sent[0];
  if (print) {
    std::printf("\n    direct sum:");
    for (int i = 0; i < length; ++i) std::printf("%s%3d", i > 0 && i % chunk == 0 ? " |" : "", direct[i]);
    std::printf("\n");
  }
  return result;
}

}  // namespace warpnet::lesson
