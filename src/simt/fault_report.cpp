#include "simt/fault_report.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "simt/block.hpp"
#include "simt/symbols.hpp"
#include "simt/trace_hooks.hpp"

namespace warpnet::simt {

namespace {

// Not async-signal-safe (it formats strings), but it only runs on the way
// out of a process a trap has already stopped.
void on_division_by_zero(int, siginfo_t* info, void*) {
  const Lane* lane = current_lane;
  const Block* block = current_block;
  if (!lane || !block) {
    // Not a kernel's: the default action, when the instruction runs again.
    ::signal(SIGFPE, SIG_DFL);
    return;
  }
  // Emulator work on a lane's fiber: a traced copy of the string code must
  // not report its accesses as the kernel's (trace_hooks.hpp).
  LibraryScope scope;
  const std::string message =
      cat("\nwarpnet emulator: ", block->where(*lane), ": integer division by zero (SIGFPE) at ",
          describe_code(info->si_addr),
          "; on a GPU the quotient is unspecified and the kernel goes on, on this CPU it traps: guard the "
          "divisor. Stopping the process.\n");
  const ssize_t written = ::write(STDERR_FILENO, message.data(), message.size());
  (void)written;
  std::_Exit(128 + SIGFPE);
}

}  // namespace

void report_division_by_zero_in_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action{};
    action.sa_sigaction = on_division_by_zero;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGFPE, &action, nullptr);
  });
}

}  // namespace warpnet::simt
