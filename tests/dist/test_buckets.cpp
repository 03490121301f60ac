// The gradient buckets on 2 ranks with parameters only some ranks' backward
// reaches (tests/dist/probe/buckets.cpp says which and what each must get).
#include <doctest/doctest.h>

#include <cstdlib>

#include "tests/dist/dist_support.hpp"

using namespace warpnet;
using namespace warpnet::test;

TEST_CASE("gradient buckets: a parameter no rank reached is left without a gradient, one rank's is summed") {
  const char* probe = std::getenv("WARPNET_BUCKETS_PROBE");
  REQUIRE_MESSAGE(probe, "WARPNET_BUCKETS_PROBE must name the probe (CTest sets it)");
  const Run r = run(cat(mpirun(2), probe));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("ok") != std::string::npos);
}
