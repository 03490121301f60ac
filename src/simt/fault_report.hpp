// A kernel thread's integer division by zero. x86 traps it (SIGFPE) and the
// process would die naming nothing; on a GPU the quotient is unspecified and
// the kernel goes on. Once installed (at the first launch), the handler
// names the kernel, block, thread and source line, then ends the process
// with status 136 (128 + SIGFPE, what a shell shows for the signal): a
// trapped thread cannot be resumed. A SIGFPE outside a kernel thread keeps
// its default action.
#pragma once

namespace warpnet::simt {

void report_division_by_zero_in_kernels();

}  // namespace warpnet::simt
