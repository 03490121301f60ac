// `warpnet bench allreduce` end to end on 2 ranks, at small sizes: every
// size's all-reduce is checked and timed with its pieces, and the loopback
// model predicts every size from the pieces. How close the prediction comes
// is a measurement, reported by the bench (src/dist/README.md), not asserted.
#include <doctest/doctest.h>

#include "tests/dist/dist_support.hpp"
#include "tests/test_support.hpp"

using namespace warpnet;
using namespace warpnet::test;

TEST_CASE("bench allreduce on 2 ranks: each size checked, timed with its pieces, predicted from them") {
  const std::string record = (scratch_dir() / "allreduce.json").string();
  // 1 KiB to 64 KiB: the eager and rendezvous protocols, below the sizes
  // whose temporary buffer glibc maps fresh (32 MiB), which therefore need
  // no calibration of their own.
  const nlohmann::json j = run_for_json(
      cat(mpirun(2), warpnet_bin(), " bench allreduce --min-bytes 1024 --max-bytes 65536 --json ", record), record);
  CHECK(j["ranks"] == 2);
  REQUIRE(j["rows"].size() == 7);
  REQUIRE(j["model"]["pieces"].size() == 7);
  for (size_t i = 0; i < 7; ++i) {
    const nlohmann::json& row = j["rows"][i];
    const double bytes = row["bytes"];
    CHECK(bytes == double(1024 << i));
    CHECK(row["check"] == "ok");
    CHECK(row["runs"].get<int>() >= 5);
    CHECK(row["median_s"].get<double>() > 0);
    CHECK(row["predicted_s"].get<double>() > 0);
    // And predicted without its own pieces: a time, or null where a line
    // had only this size to be fitted to.
    REQUIRE(row.contains("held_out_predicted_s"));
    if (!row["held_out_predicted_s"].is_null()) {
      CHECK(row["held_out_predicted_s"].get<double>() > 0);
      CHECK(row["held_out_error"].is_number());
    }
    // The pieces of each size are those of its ring: segments of S/2.
    const nlohmann::json& piece = j["model"]["pieces"][i];
    CHECK(piece["bytes"].get<double>() == bytes / 2);
    CHECK(piece["exchange_s"].get<double>() > 0);
    CHECK(piece["reduce_local_s"].get<double>() > 0);
  }
  // Each size is within 25%, beyond it, or without a line: never counted twice.
  CHECK(j["model"]["held_out_within_25_percent"].get<int>() + j["model"]["held_out_no_line"].get<int>() <= 7);
  CHECK(j["model"]["fresh_exchanges"].empty());
  CHECK(j["model"]["exchange_fresh"].is_null());
  const nlohmann::json& bounds = j["model"]["regime_bounds_bytes"];
  REQUIRE(!bounds.empty());
  for (size_t i = 1; i < bounds.size(); ++i) CHECK(bounds[i].get<double>() > bounds[i - 1].get<double>());
}
