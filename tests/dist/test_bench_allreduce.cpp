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

// A failure on one rank ends the job at once with that rank's message
// (not a 60-second wait and the other rank blaming it for hanging), and
// ranks given different sizes are refused before any exchange.
TEST_CASE("bench allreduce on 2 ranks: settings that differ, and one rank's error, end the job naming them") {
  const std::string bench = cat(" ", warpnet_bin(), " bench allreduce --budget 0.01 --runs 5 ");
  const std::string mpmd = cat(mpiexec_path(), " --oversubscribe --allow-run-as-root -np 1");
  const Run sizes = run(cat(mpmd, bench, "--max-bytes 4096 : -np 1", bench, "--max-bytes 8192"), 60);
  INFO(sizes.output);
  CHECK(sizes.status != 0);
  CHECK(sizes.output.find("rank 1's --min-bytes, --max-bytes, --runs or --budget differ from rank 0's") !=
        std::string::npos);
  // Rank 0 cannot hold a terabyte; rank 1 would wait for it in the calibration.
  const Run memory = run(cat(mpmd, bench, "--min-bytes 1099511627776 --max-bytes 1099511627776 : -np 1", bench,
                             "--min-bytes 1099511627776 --max-bytes 1099511627776"),
                         60);
  INFO(memory.output);
  CHECK(memory.status != 0);
  CHECK(memory.output.find("error: bench allreduce: --max-bytes 1099511627776 needs") != std::string::npos);
}
