// Thread count for the CPU ops. Two pools exist in the process: the OpenMP
// team our loops fork, and the one Eigen forks inside a large product (also
// OpenMP, since we compile with -fopenmp). Both are set together so "2
// threads" means 2 cores busy, never 2 x 2.
//
// Every thread of the team also flushes denormals to zero. On x86 an
// arithmetic op on a denormal (|x| < 1.2e-38 in f32) takes a microcode path
// tens of times slower; Adam's second moments and late-training gradients
// reach that range, and LeNet-5's epochs slowed from 5 s to 7.4 s by the fifth
// (2026-11-30, 2-core Xeon). Flushed, every epoch takes 4.8 s and the test
// accuracies come out the same to four digits. PyTorch offers the same switch
// (torch.set_flush_denormal), off by default there: figures a run compares
// with PyTorch's near 1e-38 differ (`warpnet op`, which never calls this,
// keeps denormals, as PyTorch does).
#include <Eigen/Core>
#include <omp.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "core/error.hpp"
#include "cpu/ops.hpp"

namespace warpnet::cpu {

// omp_set_num_threads sets the calling thread's default team size: call this
// from the thread that runs the ops (the main thread in every program here).
void set_num_threads(int threads) {
  WN_CHECK(threads >= 0, "set_num_threads: ", threads, " threads requested; use 0 for all cores or a positive count");
  const int count = threads == 0 ? omp_get_num_procs() : threads;
  omp_set_num_threads(count);
  Eigen::setNbThreads(count);
#if defined(__SSE__)
  // MXCSR is per thread: set it in each member of the team the ops will use.
#pragma omp parallel
  _mm_setcsr(_mm_getcsr() | _MM_FLUSH_ZERO_ON | 0x0040 /* DAZ: denormal inputs read as zero */);
#endif
}

int num_threads() { return omp_get_max_threads(); }

}  // namespace warpnet::cpu
