// Progress reports of long launches (simt::set_launch_progress): silent for
// a launch's first second, then blocks started of blocks, ending at all.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/simt/device_buffer.hpp"

namespace {

// Each block holds its worker for `ms` milliseconds: a grid of known length.
__global__ void slow_blocks(int ms, int* out) {
  if (threadIdx.x == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    out[blockIdx.x] = int(blockIdx.x);
  }
}

struct Report {
  std::string kernel;
  uint64_t started, blocks;
  double seconds;  // since the launch was called
};

// The reports of one launch of `blocks` blocks of `ms` milliseconds each, on `workers` workers.
std::vector<Report> reports_of(int blocks, int ms, int workers) {
  std::vector<Report> reports;
  const auto start = std::chrono::steady_clock::now();
  warpnet::simt::set_launch_progress([&](const warpnet::simt::LaunchProgress& p) {
    const std::chrono::duration<double> since = std::chrono::steady_clock::now() - start;
    reports.push_back({p.kernel, p.blocks_started, p.blocks, since.count()});
  });
  warpnet::simt::set_workers(workers);
  DeviceBuffer<int> out{size_t(blocks)};
  warpnet::simt::launch(slow_blocks, dim3(blocks), dim3(32), 0, ms, out.get());
  warpnet::simt::set_workers(0);
  warpnet::simt::set_launch_progress(nullptr);
  const auto got = out.download();
  for (int b = 0; b < blocks; ++b) REQUIRE(got[size_t(b)] == b);
  return reports;
}

}  // namespace

TEST_CASE("launch progress: a launch past a second reports blocks started, rising, ending at all of them") {
  const std::vector<Report> r = reports_of(80, 20, 1);  // 1.6 s on one worker
  REQUIRE(r.size() >= 2);
  CHECK(r.front().kernel.find("slow_blocks") != std::string::npos);
  CHECK(r.front().seconds >= 1.0);  // silent for the first second
  for (size_t i = 1; i < r.size(); ++i) CHECK(r[i].started >= r[i - 1].started);
  for (const Report& x : r) CHECK(x.blocks == 80);
  CHECK(r.back().started == 80);
  CHECK(r[r.size() - 2].started < 80);  // a report before the end, then the end's
}

TEST_CASE("launch progress: a launch within a second does not report") {
  CHECK(reports_of(10, 1, 1).empty());
  CHECK(reports_of(64, 1, 2).empty());
}
