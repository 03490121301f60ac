// A kernel thread's trap, which on this CPU would end the process naming
// nothing: an integer division by zero (or INT_MIN / -1; on a GPU the
// quotient is unspecified and the kernel goes on); in the plain copy of a
// kernel, which checks no access, a memory fault (a null or wild pointer,
// an index far out of range) or an overflow of the thread's fiber stack;
// and abort(), which a failed assert() calls. Installed at every launch
// (again if another handler replaced them since), the handlers name the
// kernel, block, thread and code, then end the process with 128 + the
// signal (what a shell shows for it): a trapped thread cannot be resumed.
// Any other SIGFPE, SIGSEGV, SIGBUS or SIGABRT goes to the handler that was
// there before, or takes the default action.
#pragma once

namespace warpnet::simt {

void report_faults_in_kernels();

// Gives the calling thread an alternate signal stack (unless it has one), so
// the handlers run even when a fiber's stack is what overflowed. Each worker
// thread calls it before it runs blocks.
void use_alternate_signal_stack();

}  // namespace warpnet::simt
