// `warpnet bench`'s GPU half (bench.hpp, gpu_half): the kernels run in
// worker processes (this program again, with --gpu-worker; bench_gpu.cpp),
// read back as JSON lines, so that a kernel that faults or hangs costs only
// itself: it is recorded as failed and a new worker goes on with the rest.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "cli/bench.hpp"
#include "core/text.hpp"
#include "core/timer.hpp"

extern char** environ;

namespace warpnet::cli::bench {

using nlohmann::json;

namespace {

// Starts this program again as a worker; returns its pid.
pid_t spawn_worker(const std::string& op, const device::Sizes& sizes, const std::vector<std::string>& ids,
                   const Settings& s, const std::string& out_path) {
  // Seconds with every digit: std::to_string keeps six decimals, and a
  // --budget of 1e-7 reached the worker as 0.000000, which it refused.
  auto exact = [](double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", seconds);
    return std::string(text);
  };
  std::vector<std::string> size_items;
  for (int64_t v : sizes) size_items.push_back(std::to_string(v));
  const std::string sizes_text = join(size_items);
  std::vector<std::string> args = {"warpnet",    "bench",       op,
                                   "--size",     sizes_text, "--kernels", join(ids),
                                   "--runs",     std::to_string(s.runs), "--budget", exact(s.budget_s),
                                   "--timeout",  exact(s.timeout_s), "--seed", std::to_string(s.seed),
                                   "--threads",  std::to_string(s.threads), "--gpu-worker", out_path};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  std::fflush(stdout);
  const int err = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ);
  WN_CHECK(err == 0, "bench: cannot start a GPU worker: ", std::strerror(err));
  return pid;
}

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return cat("exited with code ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return cat("was killed by signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)), ")");
  return "ended";
}

}  // namespace

json gpu_half(const std::string& op, const device::Sizes& sizes, const std::vector<const device::Kernel*>& kernels,
              const Settings& s) {
  std::vector<std::string> ids;
  for (const device::Kernel* k : kernels) ids.push_back(k->id());
  std::map<std::string, json> results;
  std::map<std::string, int> result_attempt;  // the worker whose result a kernel's row keeps
  std::set<std::string> rerun_failed;         // version 0s run again for their output, and failed then
  std::vector<Entry> entries;
  for (const device::Kernel* k : kernels)
    entries.push_back({k->id(), k->version,
                       cat(input_format_name(*k), "->", k->output_format ? k->output_format->name : "fp32")});
  json device_info, copy;
  // A worker that sends nothing for this long is stuck outside a kernel wait (which times out itself).
  const double silence_limit = std::max(4 * s.timeout_s, 240.0);
  // A worker per kernel that may kill one, and per yardstick whose re-run may.
  const int version_zeros =
      int(std::count_if(kernels.begin(), kernels.end(), [](const device::Kernel* k) { return k->version == 0; }));
  for (int attempt = 0; attempt <= int(ids.size()) + version_zeros; ++attempt) {
    std::vector<std::string> todo;
    for (const std::string& id : ids)
      if (!results.count(id)) todo.push_back(id);
    if (todo.empty()) break;
    // A new worker runs the yardsticks of the formats left first: the
    // checks at large sizes need their outputs.
    const std::vector<std::string> rerun = yardsticks_to_rerun(entries, results, todo, rerun_failed);
    todo.insert(todo.begin(), rerun.begin(), rerun.end());
    char path[] = "/tmp/warpnet-bench-XXXXXX";
    const int fd = mkstemp(path);
    WN_CHECK(fd >= 0, "bench: cannot make a temporary file in /tmp");
    close(fd);
    const pid_t pid = spawn_worker(op, sizes, todo, s, path);
    std::string current, pending;
    size_t offset = 0;
    Timer since_news;
    int status = 0;
    bool killed = false;
    for (bool running = true; running;) {
      const pid_t done = waitpid(pid, &status, WNOHANG);
      running = done == 0;
      std::ifstream in(path, std::ios::binary);
      in.seekg(std::streamoff(offset));
      std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      offset += chunk.size();
      pending += chunk;
      for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
        const json event = json::parse(pending.substr(0, nl));
        pending.erase(0, nl + 1);
        since_news.reset();
        const std::string type = event.value("type", "");
        if (type == "device" && device_info.is_null()) device_info = event["device"];
        if (type == "copy" && copy.is_null()) copy = event;
        if (type == "start") {
          current = event["kernel"];
          std::printf("  gpu: %s ...\n", current.c_str());
          std::fflush(stdout);
        }
        if (type == "result") {
          const std::string id = event["kernel"];
          current.clear();
          if (!results.count(id)) {
            results[id] = event;
            result_attempt[id] = attempt;
          } else if (!output_checked(event)) {
            rerun_failed.insert(id);  // run again for its output, which this worker did not get
          }
          if (event["status"] != "ok")
            std::printf("  gpu: %s %s: %s\n", id.c_str(), event["status"].get<std::string>().c_str(),
                        event.value("error", "").c_str());
        }
        // The yardstick's second timing pairs with its first only from the
        // same worker (a later one runs it again for its output alone).
        if (type == "vendor_again" && result_attempt.count(event["kernel"].get<std::string>()) &&
            result_attempt[event["kernel"].get<std::string>()] == attempt)
          results[event["kernel"].get<std::string>()]["timing_after_group"] = event["timing"];
      }
      if (running && since_news.seconds() > silence_limit) {
        kill(pid, SIGKILL);
        killed = true;
      }
      if (running) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::remove(path);
    if (!device_info.is_null() && !device_info.value("usable", false)) break;
    const std::string death = killed ? cat("the worker sent nothing for ", silence_limit, " s while running it and was killed")
                                     : cat("the worker ", describe_exit(status), " while running it");
    if (!current.empty() && !results.count(current)) {
      results[current] = {{"kernel", current}, {"status", "failed"}, {"context_lost", true}, {"error", death}};
    } else if (!current.empty()) {
      // A yardstick run again for its output: its row stands, the rest go on without it.
      rerun_failed.insert(current);
      std::printf("  gpu: %s, run again for its output: %s\n", current.c_str(), death.c_str());
    } else if (!(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3))) {
      // Died between kernels (or before the first): give the rest one more worker, then stop.
      std::printf("  gpu: the worker %s outside any kernel\n", describe_exit(status).c_str());
      if (attempt > 0) break;
    }
  }
  json rows = json::array();
  for (const device::Kernel* k : kernels) {
    json r = results.count(k->id()) ? results[k->id()]
                                    : json{{"kernel", k->id()}, {"status", "not run"}, {"error", "no worker reached it"}};
    r.erase("type");
    r["version"] = k->version;
    r["name"] = k->name;
    r["precision"] = k->precision;
    r["input_format"] = input_format_name(*k);
    r["output_format"] = k->output_format ? k->output_format->name : "fp32";
    r["flops"] = k->flops(sizes);
    r["bytes_formula"] = k->bytes(sizes);
    rows.push_back(r);
  }
  if (copy.is_object()) copy.erase("type");
  return {{"device", device_info}, {"copy", copy}, {"kernels", rows}};
}

}  // namespace warpnet::cli::bench
