// What the dist suite's tests share: running a command with a time limit,
// mpirun's path, and reading the JSON a command writes.
#pragma once
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace warpnet::test {

struct Run {
  int status = -1;     // as pclose reports it
  std::string output;  // stdout and stderr together
  double seconds = 0;
};

// Runs `command` through the shell under `timeout` (coreutils), so a run
// that hangs fails the test after `limit_s` instead of stalling CTest.
inline Run run(const std::string& command, int limit_s = 120) {
  const std::string full = cat("timeout -k 5 ", limit_s, " ", command, " 2>&1");
  const auto start = std::chrono::steady_clock::now();
  Run r;
  FILE* pipe = ::popen(full.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) r.output.append(buf.data(), n);
  r.status = ::pclose(pipe);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

inline std::string mpiexec_path() {
  const char* env = std::getenv("WARPNET_MPIEXEC");
  return env ? env : "";
}

// `mpirun -np N` as CI can run it: as root, and with more ranks than cores.
inline std::string mpirun(int ranks) {
  return cat(mpiexec_path(), " --oversubscribe --allow-run-as-root -np ", ranks, " ");
}

inline std::string warpnet_bin() {
  const char* bin = std::getenv("WARPNET_BIN");
  return bin ? bin : "warpnet";
}

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nlohmann::json();
  return nlohmann::json::parse(in, nullptr, false);
}

// Runs `command`, which writes the JSON file `path` (removed first), requires
// it to succeed (its output shown if it does not) and returns the file.
inline nlohmann::json run_for_json(const std::string& command, const std::string& path) {
  std::remove(path.c_str());
  const Run r = run(command);
  INFO(command);
  INFO(r.output);
  REQUIRE(r.status == 0);
  const nlohmann::json j = read_json(path);
  REQUIRE(j.is_object());
  return j;
}

}  // namespace warpnet::test
