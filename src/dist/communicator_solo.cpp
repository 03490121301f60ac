// dist/communicator.hpp for a build without MPI: one process, rank 0 of 1.
// A Session cannot start (data-parallel training needs MPI); everything else
// behaves as the one-process group, where an all-reduce leaves data as it is.
#if !WARPNET_HAS_MPI
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "core/error.hpp"
#include "dist/communicator.hpp"

namespace warpnet::dist {

bool mpi_available() { return false; }
std::string mpi_library() { return "not built with MPI"; }

Session::Session(double) {
  fail("dist: this warpnet was built without MPI; install libopenmpi-dev and openmpi-bin (scripts/setup.sh), "
       "configure again with CMake, rebuild, and run under mpirun -np N");
}
Session::~Session() = default;

bool active() { return false; }
int rank() { return 0; }
int size() { return 1; }
int local_size() { return 1; }
int local_rank() { return 0; }
double timeout_s() { return 0; }
void set_activity(const std::string&) {}
std::string whoami() { return ""; }

void abort_job(const std::string& message, int exit_code) {
  std::fprintf(stderr, "warpnet: %s\n", message.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  std::_Exit(exit_code);
}

Pending& Pending::operator=(Pending&& other) noexcept {
  slot_ = other.slot_;
  other.slot_ = -1;
  return *this;
}
Pending::~Pending() = default;
bool Pending::test() { return true; }
void Pending::wait() { slot_ = -1; }

Pending start_allreduce_sum(float*, int64_t) { return Pending(); }
void allreduce_sum(float*, int64_t) {}
void allreduce_sum(double*, int64_t) {}
void allreduce_max(double*, int64_t) {}
void broadcast(void*, int64_t, int) {}
std::vector<uint64_t> allgather(uint64_t value) { return {value}; }
void barrier() {}
void exchange(const void*, void*, int64_t, int) { fail("dist: an exchange needs two ranks (MPI)"); }
void reduce_local_sum(const float* in, float* inout, int64_t count) {
  for (int64_t i = 0; i < count; ++i) inout[i] += in[i];
}
int64_t eager_limit_bytes() { return 0; }
double wtime() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace warpnet::dist
#endif  // !WARPNET_HAS_MPI
