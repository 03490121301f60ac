// Thread count for the CPU ops. Two pools exist in the process: the OpenMP
// team our loops fork, and the one Eigen forks inside a large product (also
// OpenMP, since we compile with -fopenmp). Both are set together so "2
// threads" means 2 cores busy, never 2 x 2.
#include <Eigen/Core>
#include <omp.h>

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
}

int num_threads() { return omp_get_max_threads(); }

}  // namespace warpnet::cpu
