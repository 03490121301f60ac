#include "simt/fault_report.hpp"

#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "simt/allocations.hpp"
#include "simt/block.hpp"
#include "simt/stacks.hpp"
#include "simt/symbols.hpp"
#include "simt/trace_hooks.hpp"

namespace warpnet::simt {

namespace {

// The signals reported, and the handlers ours replaced: a signal that is
// not a kernel thread's goes to them.
constexpr int kReported[] = {SIGFPE, SIGSEGV, SIGBUS, SIGABRT};
struct sigaction previous[std::size(kReported)];

struct sigaction& previous_of(int signal) {
  size_t i = 0;
  while (kReported[i] != signal) ++i;  // on_fault is installed for these alone
  return previous[i];
}

// Not a kernel thread's fault: what was there before, or the default action
// when the instruction runs again.
void on_fault(int signal, siginfo_t* info, void* context);

void pass_on(int signal, siginfo_t* info, void* context) {
  const struct sigaction& before = previous_of(signal);
  // (Never on_fault itself, which report_faults_in_kernels does not save:
  // passing a signal on to it would loop for ever.)
  if ((before.sa_flags & SA_SIGINFO) && before.sa_sigaction != on_fault)
    return before.sa_sigaction(signal, info, context);
  if (before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN) return before.sa_handler(signal);
  ::signal(signal, SIG_DFL);
}

// The faulting instruction and the stack pointer, from the saved registers
// (null where this architecture's are not known here).
struct Registers {
  const void* pc = nullptr;
  const char* sp = nullptr;
};
Registers registers_of(void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  return {reinterpret_cast<const void*>(uc->uc_mcontext.gregs[REG_RIP]),
          reinterpret_cast<const char*>(uc->uc_mcontext.gregs[REG_RSP])};
#elif defined(__aarch64__)
  return {reinterpret_cast<const void*>(uc->uc_mcontext.pc), reinterpret_cast<const char*>(uc->uc_mcontext.sp)};
#else
  (void)uc;
  return {};
#endif
}

// Writes the report and ends the process as the signal would have (128 +
// signal, what a shell shows). Not async-signal-safe (it formats strings),
// but it only runs on the way out of a process a trap has already stopped;
// the report names no allocation, whose lock another thread may hold.
[[noreturn]] void stop(int signal, const Lane& lane, const Block& block, const std::string& what, const void* pc,
                       const std::string& advice) {
  // describe_code takes return addresses (it looks one byte back); the pc is the trapping instruction's own.
  const std::string message =
      cat("\nwarpnet emulator: ", block.where(lane), ": ", what,
          pc ? " at " + describe_code(static_cast<const char*>(pc) + 1) : "", "; ", advice, ". Stopping the process.\n");
  const ssize_t written = ::write(STDERR_FILENO, message.data(), message.size());
  (void)written;
  std::_Exit(128 + signal);
}

void on_fault(int signal, siginfo_t* info, void* context) {
  const Lane* lane = current_lane;
  const Block* block = current_block;
  const bool integer = signal == SIGFPE && (info->si_code == FPE_INTDIV || info->si_code == FPE_INTOVF);
  if (!lane || !block || LibraryScope::inside() || (signal == SIGFPE && !integer)) return pass_on(signal, info, context);
  // Emulator work on a lane's fiber: a traced copy of the string code must
  // not report its accesses as the kernel's (trace_hooks.hpp).
  LibraryScope scope;
  if (signal == SIGABRT)  // the pc is in the C library's raise(), not the kernel: name none
    stop(signal, *lane, *block, "abort() was called (SIGABRT; a failed assert() prints its message above)", nullptr,
         "on a GPU a failed assert stops the kernel and every later call returns cudaErrorAssert (\"device-side "
         "assert triggered\"): the process cannot go on either way");
  if (signal == SIGFPE)  // x86 traps INT_MIN / -1 as a division by zero too (#DE)
    stop(signal, *lane, *block, "integer division by zero (or INT_MIN / -1) (SIGFPE)", info->si_addr,
         "on a GPU the quotient is unspecified and the kernel goes on, on this CPU it traps: guard the divisor");
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  const Registers r = registers_of(context);
  // Overflowed: the fault is in the guard page, or the stack pointer has
  // gone below the stack (a frame larger than the guard can jump it).
  const char* bottom = block->stacks().bottom(lane->linear);
  const bool overflow = block->stacks().in_guard(lane->linear, info->si_addr) ||
                        (r.sp && r.sp < bottom && bottom - r.sp < (std::ptrdiff_t(1) << 24));
  const char* name = signal == SIGSEGV ? "SIGSEGV" : "SIGBUS";
  if (overflow)
    stop(signal, *lane, *block,
         cat("its stack overflowed (each emulated thread has ", StackSet::kStackBytes / 1024, " KiB)"), r.pc,
         "a large local array? Keep big data in shared or global memory");
  const std::string what =
      address < kNullPage  // nothing is ever mapped this low: a null pointer plus an offset
          ? cat("a memory fault (", name, ") at address ", address, ": a null pointer")
          : cat("a memory fault (", name, ") at address 0x", std::hex, address, std::dec,
                ", memory the process may not touch");
  stop(signal, *lane, *block, what, r.pc,
       "this copy of the kernel checks no access; the traced one (warpnet trace, the tests' checker) names the bad "
       "one before it faults");
}

// Each worker thread's stack for the handler: the fiber's own may be what
// overflowed. Freed, and unset, when the thread ends.
class AlternateStack {
 public:
  AlternateStack() {
    stack_t current{};
    if (::sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;  // one is set: use it
    memory_ = std::make_unique_for_overwrite<char[]>(kBytes);  // (not zeroed: a thread per launch makes one)
    stack_t ours{};
    ours.ss_sp = memory_.get();
    ours.ss_size = kBytes;
    if (::sigaltstack(&ours, nullptr) != 0) memory_.reset();
  }
  ~AlternateStack() {
    if (!memory_) return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    ::sigaltstack(&off, nullptr);
  }
  AlternateStack(const AlternateStack&) = delete;
  AlternateStack& operator=(const AlternateStack&) = delete;

 private:
  static constexpr size_t kBytes = 64 * 1024;
  std::unique_ptr<char[]> memory_;
};

}  // namespace

void report_faults_in_kernels() {
  // At every launch: a test framework may have put its own handlers back
  // since the last (doctest does at the end of each test case). Under a
  // lock: two threads launching at once would otherwise both install, and
  // the second save on_fault as the handler to pass other signals on to.
  static std::mutex installing;
  const std::lock_guard lock(installing);
  for (const int signal : kReported) {
    struct sigaction current {};
    ::sigaction(signal, nullptr, &current);
    if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_fault) continue;
    struct sigaction action {};
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    ::sigaction(signal, &action, &previous_of(signal));
  }
}

void use_alternate_signal_stack() { thread_local AlternateStack stack; }

}  // namespace warpnet::simt
