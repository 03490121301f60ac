// Open MPI's mpirun tells each process the job's size. A command that is not
// data-parallel, started as one of several such processes, would run the same
// work several times and write the same files: refused, saying what to do.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace warpnet::cli {

// The processes mpirun started for this job; 1 when not under mpirun.
inline int mpirun_job_size() {
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  return size ? std::max(1, std::atoi(size)) : 1;
}

// "rank 1 of 2: " when started by mpirun as one of several processes, else
// "": for an error printed before a session names the ranks.
inline std::string mpirun_rank_prefix() {
  const int n = mpirun_job_size();
  if (n <= 1) return "";
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  return cat("rank ", rank ? rank : "?", " of ", n, ": ");
}

// Throws Error when started by mpirun as one of several processes.
// `what`: the command as the user typed it; `instead`: how to run it.
inline void refuse_several_processes(const std::string& what, const std::string& instead) {
  const int n = mpirun_job_size();
  WN_CHECK(n <= 1, what, ": started by mpirun as one of ", n, " processes, each of which would do the same work "
           "and write the same files; ", instead);
}

}  // namespace warpnet::cli
