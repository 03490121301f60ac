// A kernel thread's integer division by zero (or INT_MIN / -1). x86 traps it
// (SIGFPE) and the process would die naming nothing; on a GPU the quotient
// is unspecified and the kernel goes on. Installed at every launch (again
// if another handler replaced it since), the handler names the kernel,
// block, thread and code, then ends the process with status 136 (128 +
// SIGFPE, what a shell shows for the signal): a trapped thread cannot be
// resumed. Any other SIGFPE goes to the handler that was there before, or
// takes the default action.
#pragma once

namespace warpnet::simt {

void report_division_by_zero_in_kernels();

}  // namespace warpnet::simt
