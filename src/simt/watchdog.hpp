// The end of a launch that would never end. The emulator runs a thread until
// it blocks (a barrier, a warp collective, its end) and never preempts it, so
// a thread that waits in a loop for memory another thread writes (a
// spin-wait) waits for ever here, where a GPU since Volta schedules the
// writer. A watchdog thread counts the emulator's thread switches; when a
// launch makes none for WARPNET_SIMT_HANG_TIMEOUT seconds (60 unless set;
// 0: no watchdog), it prints the kernel, the block and thread each worker is
// stuck in, and why, and ends the process with
// status 124 (a spinning thread cannot be unwound). Stepped launches are not
// watched: their pauses are the user's. The count is the process's: while
// another host thread's launches go on switching, a spin-wait is reported
// only once they stop.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

namespace warpnet::simt::watchdog {

// This worker thread's count of thread switches: a Block adds to it.
std::atomic<uint64_t>& switches_of_this_thread();

// A launch in flight, from construction to destruction.
class LaunchWatch {
 public:
  explicit LaunchWatch(const std::string& kernel);
  ~LaunchWatch();
  LaunchWatch(const LaunchWatch&) = delete;
  LaunchWatch& operator=(const LaunchWatch&) = delete;
};

// Seconds without a switch before the process is ended (0: never).
double timeout_seconds();

}  // namespace warpnet::simt::watchdog
