#include "simt/fault_report.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "simt/block.hpp"
#include "simt/symbols.hpp"
#include "simt/trace_hooks.hpp"

namespace warpnet::simt {

namespace {

struct sigaction previous;  // the handler ours replaced: a SIGFPE not a kernel's goes to it

void on_integer_fault(int signal, siginfo_t* info, void* context) {
  const Lane* lane = current_lane;
  const Block* block = current_block;
  const bool kernel = lane && block && !LibraryScope::inside() &&
                      (info->si_code == FPE_INTDIV || info->si_code == FPE_INTOVF);
  if (!kernel) {
    // Not a kernel thread's integer fault: what was there before, or the
    // default action when the instruction runs again.
    if (previous.sa_flags & SA_SIGINFO) return previous.sa_sigaction(signal, info, context);
    if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) return previous.sa_handler(signal);
    ::signal(SIGFPE, SIG_DFL);
    return;
  }
  // Emulator work on a lane's fiber: a traced copy of the string code must
  // not report its accesses as the kernel's (trace_hooks.hpp). Not
  // async-signal-safe (it formats strings), but it only runs on the way out
  // of a process a trap has already stopped.
  LibraryScope scope;
  // describe_code takes return addresses (it looks one byte back); si_addr
  // is the trapping instruction's own.
  const std::string message =
      cat("\nwarpnet emulator: ", block->where(*lane), ": integer division ",
          info->si_code == FPE_INTDIV ? "by zero" : "overflow (INT_MIN / -1)", " (SIGFPE) at ",
          describe_code(static_cast<const char*>(info->si_addr) + 1),
          "; on a GPU the quotient is unspecified and the kernel goes on, on this CPU it traps: guard the "
          "divisor. Stopping the process.\n");
  const ssize_t written = ::write(STDERR_FILENO, message.data(), message.size());
  (void)written;
  std::_Exit(128 + SIGFPE);
}

}  // namespace

void report_division_by_zero_in_kernels() {
  // At every launch: a test framework may have put its own handler back
  // since the last (doctest does at the end of each test case).
  struct sigaction current {};
  ::sigaction(SIGFPE, nullptr, &current);
  if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_integer_fault) return;
  struct sigaction action {};
  action.sa_sigaction = on_integer_fault;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGFPE, &action, &previous);
}

}  // namespace warpnet::simt
