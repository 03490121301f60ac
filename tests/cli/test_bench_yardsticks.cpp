// Which version 0 a new `warpnet bench` worker runs again after one that
// faulted or hung (bench_yardsticks.cpp). A wrong answer either wastes the
// rare GPU session (a yardstick that crashes every worker, run again each
// time) or quietly weakens the checks (versions at large sizes compared with
// nothing), so each case is spelled out here.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli/bench.hpp"

namespace bench = warpnet::cli::bench;
using nlohmann::json;
using Ids = std::vector<std::string>;

namespace {

// Rows in registry order, shaped like conv2d's: two fp32 version 0s
// (cuDNN's fastest and its implicit GEMM) and warpnet's versions; and a bf16
// group with a version 0 of its own, as conv2d_nhwc has (one op here, to
// have two format groups in one bench).
const std::vector<bench::Entry> kConv = {
    {"conv2d/00_cudnn", 0, "fp32->fp32"},       {"conv2d/00_cudnn_implicit_gemm", 0, "fp32->fp32"},
    {"conv2d/00_cudnn_bf16", 0, "bf16->fp32"},  {"conv2d/04_implicit_gemm", 4, "fp32->fp32"},
    {"conv2d/09_implicit_gemm_pipelined", 9, "fp32->fp32"}, {"conv2d/13_implicit_gemm_wgmma", 13, "bf16->fp32"},
};

json checked(const std::string& status = "ok") { return {{"status", status}, {"verify", {{"ok", true}}}}; }

}  // namespace

TEST_CASE("a new worker runs again the first yardstick that gave an output, only for the formats it still runs") {
  std::map<std::string, json> results = {{"conv2d/00_cudnn", checked()},
                                         {"conv2d/00_cudnn_implicit_gemm", checked()},
                                         {"conv2d/00_cudnn_bf16", checked()},
                                         {"conv2d/04_implicit_gemm", checked()}};
  // v9 (fp32) is left: cuDNN's fastest goes first, not its implicit GEMM too,
  // and not the bf16 yardstick, whose group is done.
  CHECK(bench::yardsticks_to_rerun(kConv, results, {"conv2d/09_implicit_gemm_pipelined"}, {}) ==
        Ids{"conv2d/00_cudnn"});
  // Both groups left: one yardstick each, in registry order.
  CHECK(bench::yardsticks_to_rerun(kConv, results,
                                   {"conv2d/09_implicit_gemm_pipelined", "conv2d/13_implicit_gemm_wgmma"},
                                   {}) == Ids{"conv2d/00_cudnn", "conv2d/00_cudnn_bf16"});
  // Nothing of a group left, nothing run again.
  CHECK(bench::yardsticks_to_rerun(kConv, results, {}, {}).empty());
}

TEST_CASE("a yardstick whose timing failed after its check still gives its output; one that lost the context does not") {
  std::map<std::string, json> results = {{"conv2d/00_cudnn", checked("failed")},
                                         {"conv2d/00_cudnn_implicit_gemm", checked()}};
  // Timed in vain, but its output passed the check: the worker compared with it, so the next one must too.
  CHECK(bench::yardsticks_to_rerun(kConv, results, {"conv2d/04_implicit_gemm"}, {}) == Ids{"conv2d/00_cudnn"});

  results["conv2d/00_cudnn"]["context_lost"] = true;  // it may be what killed the worker
  CHECK(bench::yardsticks_to_rerun(kConv, results, {"conv2d/04_implicit_gemm"}, {}) ==
        Ids{"conv2d/00_cudnn_implicit_gemm"});

  // A yardstick whose check failed was none in its worker either.
  results = {{"conv2d/00_cudnn", {{"status", "wrong"}, {"verify", {{"ok", false}}}}},
             {"conv2d/00_cudnn_implicit_gemm", {{"status", "failed"}, {"error", "refused every test size"}}}};
  CHECK(bench::yardsticks_to_rerun(kConv, results, {"conv2d/04_implicit_gemm"}, {}).empty());
}

TEST_CASE("a yardstick whose re-run failed is not run a third time: the rest go on without it") {
  const std::map<std::string, json> results = {{"conv2d/00_cudnn", checked()},
                                               {"conv2d/00_cudnn_implicit_gemm", checked()}};
  const Ids todo = {"conv2d/09_implicit_gemm_pipelined"};
  CHECK(bench::yardsticks_to_rerun(kConv, results, todo, {"conv2d/00_cudnn"}) ==
        Ids{"conv2d/00_cudnn_implicit_gemm"});
  CHECK(bench::yardsticks_to_rerun(kConv, results, todo, {"conv2d/00_cudnn", "conv2d/00_cudnn_implicit_gemm"})
            .empty());
}

TEST_CASE("a yardstick not yet run is no re-run: it is in the worker's list already") {
  // The first worker died at the bf16 yardstick's turn: it was never run, so it is in todo, not run again.
  const std::map<std::string, json> results = {{"conv2d/00_cudnn", checked()}};
  const Ids todo = {"conv2d/00_cudnn_bf16", "conv2d/13_implicit_gemm_wgmma"};
  CHECK(bench::yardsticks_to_rerun(kConv, results, todo, {}).empty());
}

TEST_CASE("a row's output counts as checked when its check passed with the context kept, timed or not") {
  CHECK(bench::output_checked(checked()));
  CHECK(bench::output_checked(checked("failed")));  // the timing failed after the check: the output was used
  json lost = checked("failed");
  lost["context_lost"] = true;
  CHECK_FALSE(bench::output_checked(lost));
  CHECK_FALSE(bench::output_checked({{"status", "wrong"}, {"verify", {{"ok", false}}}}));
  CHECK_FALSE(bench::output_checked({{"status", "failed"}, {"error", "the worker was killed by signal 11"}}));
}
