// The CPU thread count for one test case: a test that sets it leaves the
// next ones in its binary at the count they expect.
#pragma once
#include "cpu/ops.hpp"

namespace warpnet::test {

// Runs the enclosed ops on `threads` threads, then restores the count.
class ThreadCountScope {
 public:
  explicit ThreadCountScope(int threads) : saved_(cpu::num_threads()) { cpu::set_num_threads(threads); }
  ~ThreadCountScope() { cpu::set_num_threads(saved_); }
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;

 private:
  int saved_;
};

}  // namespace warpnet::test
