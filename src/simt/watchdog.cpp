#include "simt/watchdog.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "simt/block.hpp"

namespace warpnet::simt::watchdog {

namespace {

struct alignas(64) Counter {
  std::atomic<uint64_t> switches{0};
  // The thread's current_lane and current_block, for naming what it runs
  // when it stops switching: the worker is then stuck inside one lane, so
  // they hold still while the watchdog reads them.
  Lane* const* lane = &current_lane;
  Block* const* block = &current_block;
};

// Never destroyed: the watchdog thread may read it while the process exits.
struct State {
  std::mutex mutex;
  std::vector<Counter*> live;  // the counters of the threads that exist
  uint64_t retired = 0;        // the counts of threads that ended
  int in_flight = 0;           // launches
  std::string kernel;          // the latest launch's
};
State& state() {
  static State* s = new State;
  return *s;
}

uint64_t total_switches(State& s) {
  uint64_t total = s.retired;
  for (const Counter* c : s.live) total += c->switches.load(std::memory_order_relaxed);
  return total;
}

// Worker threads come and go with launches: each registers its counter on
// first use and folds it into `retired` when it ends.
struct Registered {
  Counter* counter = new Counter;
  Registered() {
    std::lock_guard lock(state().mutex);
    state().live.push_back(counter);
  }
  ~Registered() {
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.retired += counter->switches.load(std::memory_order_relaxed);
    std::erase(s.live, counter);
    delete counter;
  }
};

// What the workers run, "kernel k, block (0,0,0), thread (0,0,0)" each, and
// the first one's kernel; empty when none is inside a lane.
struct Running {
  std::string threads, kernel;
};
Running running(State& s) {
  Running out;
  for (const Counter* c : s.live) {
    const Lane* lane = *c->lane;
    const Block* block = *c->block;
    if (!lane || !block) continue;
    out.threads += (out.threads.empty() ? "" : "; ") + block->where(*lane);
    if (out.kernel.empty()) out.kernel = block->kernel_name();
  }
  return out;
}

[[noreturn]] void stop(const std::string& kernel, const std::string& threads, double seconds) {
  std::fprintf(stderr,
               "\nwarpnet emulator: kernel %s: no thread has switched (reached a barrier, a warp collective or its "
               "end) for %.0f s%s%s%s. Is a thread waiting in a loop for memory another thread writes (a spin-wait)? "
               "The emulator runs one thread at a time until it blocks and never preempts it, so that wait never "
               "ends here, where a GPU since Volta schedules the writer (a __nanosleep() in the loop lets the "
               "block's other threads run; a sleep that never ends counts as no switch). Stopping the process "
               "(WARPNET_SIMT_HANG_TIMEOUT=<seconds> waits longer, 0 for ever).\n",
               kernel.c_str(), seconds, threads.empty() ? "" : " (running: ", threads.c_str(), threads.empty() ? "" : ")");
  std::fflush(stderr);
  std::_Exit(124);
}

// Counts ticks of 250 ms without a switch rather than reading a clock: a
// process stopped (Ctrl-Z, a debugger) loses one tick, not the timeout.
void watch(double timeout) {
  State& s = state();
  uint64_t last = 0;
  int still = 0;
  constexpr double kTick = 0.25;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(int(kTick * 1000)));
    std::string kernel;
    Running stuck;
    bool in_flight = false;
    uint64_t now_switches = 0;
    {
      std::lock_guard lock(s.mutex);
      in_flight = s.in_flight > 0;
      now_switches = total_switches(s);
      kernel = s.kernel;
      if (in_flight && now_switches == last && (still + 1) * kTick >= timeout) stuck = running(s);
    }
    if (!in_flight || now_switches != last) {
      last = now_switches;
      still = 0;
      continue;
    }
    // The kernel a stuck thread runs, which is not the latest launch's when
    // host threads launch at once.
    if (++still * kTick >= timeout) stop(stuck.kernel.empty() ? kernel : stuck.kernel, stuck.threads, timeout);
  }
}

}  // namespace

double timeout_seconds() {
  static const double seconds = [] {
    const char* env = std::getenv("WARPNET_SIMT_HANG_TIMEOUT");
    if (!env || !*env) return 60.0;
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    if (end == env || *end || !(v >= 0)) {
      std::fprintf(stderr, "warpnet emulator: WARPNET_SIMT_HANG_TIMEOUT=%s is not a number of seconds; using 60\n",
                   env);
      return 60.0;
    }
    return v;
  }();
  return seconds;
}

std::atomic<uint64_t>& switches_of_this_thread() {
  thread_local Registered registered;
  return registered.counter->switches;
}

LaunchWatch::LaunchWatch(const std::string& kernel) {
  const double timeout = timeout_seconds();
  if (timeout > 0) {
    static std::once_flag started;
    std::call_once(started, [timeout] { std::thread(watch, timeout).detach(); });
  }
  State& s = state();
  std::lock_guard lock(s.mutex);
  ++s.in_flight;
  s.kernel = kernel;
}

LaunchWatch::~LaunchWatch() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  --s.in_flight;
}

}  // namespace warpnet::simt::watchdog
