// The process group of a data-parallel job, over MPI: start and end it, who
// am I (rank) among how many (size), and the collectives training needs —
// all-reduce (sum) and broadcast of host buffers — with waits that end the
// whole job, naming this rank and what it was doing, instead of hanging.
//
// Where it sits: dist/ is beside cpu/ and device/ in the dependency order
// (nn -> autograd -> device/cpu/dist -> core). It moves the bytes of host
// buffers and knows nothing of layers, tapes or optimizers; nn/data_parallel
// decides what to send (gradient buckets, weights) and when. So the training
// loop stays in nn, and MPI's headers stay in one .cpp file.
//
// Built without MPI (no libopenmpi-dev when CMake ran), the same functions
// exist for one process: size() is 1, and Session refuses with a message
// that says what to install.
//
// Threads: MPI is started with MPI_THREAD_FUNNELED — only the thread that
// made the Session calls these functions; OpenMP/Eigen threads never do.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace warpnet::dist {

// Whether this build links MPI.
bool mpi_available();
// MPI_Get_library_version's first line, or "not built with MPI".
std::string mpi_library();

// The job's process group (MPI_COMM_WORLD) for the life of the object: MPI
// is initialised on construction and finalised on destruction. One per
// process. Run under mpirun, size() is mpirun's -np; run alone, 1.
class Session {
 public:
  // `timeout_s`: the longest any wait in a collective may last before this
  // rank ends the job (another rank has died or hangs).
  explicit Session(double timeout_s);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

bool active();      // a Session exists
int rank();         // 0 without a Session
int size();         // 1 without a Session
int local_size();   // processes of this job on this machine (1 without a Session)
int local_rank();   // this process's number among them, 0.. local_size() − 1 (0 without a Session)
double timeout_s();

// What this rank is doing now ("gradient all-reduce, epoch 2 step 17"), for
// the message a timeout, a termination signal or an abort prints.
void set_activity(const std::string& what);

// "rank 1 of 2" (or "" for one process): the prefix of this rank's messages.
std::string whoami();

// Ends the whole job: prints "warpnet: rank R of N: <message>" to stderr and
// calls MPI_Abort, which makes mpirun stop every rank. Without a Session (or
// alone) it prints "warpnet: <message>" and exits.
[[noreturn]] void abort_job(const std::string& message, int exit_code = 1);

// An all-reduce in flight (MPI_Iallreduce); move-only. wait() or the
// destructor completes it.
class Pending {
 public:
  Pending() = default;
  Pending(Pending&& other) noexcept : slot_(other.slot_) { other.slot_ = -1; }
  Pending& operator=(Pending&& other) noexcept;
  ~Pending();
  bool valid() const { return slot_ >= 0; }
  // Lets MPI move the data along (Open MPI progresses a non-blocking
  // collective only inside MPI calls); true when it has completed.
  bool test();
  // Blocks until complete, within the session's timeout (then abort_job).
  void wait();

 private:
  friend Pending start_allreduce_sum(float* data, int64_t count);
  int slot_ = -1;
};

// In-place sum over all ranks: every rank ends with the same values. The
// order of the additions is MPI's; for two ranks a + b = b + a, bit for bit.
Pending start_allreduce_sum(float* data, int64_t count);
void allreduce_sum(float* data, int64_t count);
void allreduce_sum(double* data, int64_t count);
void allreduce_max(double* data, int64_t count);
// Rank `root`'s bytes into every rank's `data`.
void broadcast(void* data, int64_t bytes, int root = 0);
// One value from each rank, in rank order.
std::vector<uint64_t> allgather(uint64_t value);
void barrier();
// MPI_Wtime (seconds), or a steady clock without MPI.
double wtime();

// ---- the pieces of an all-reduce, for the loopback model's calibration ------
// (dist/loopback_model.hpp; `warpnet bench allreduce` times them alone)

// This rank and `peer` each send `bytes` to the other at once (MPI_Isend +
// MPI_Irecv): the exchange a ring all-reduce makes in every round.
void exchange(const void* send, void* receive, int64_t bytes, int peer);
// inout[i] += in[i] by MPI's own reduction (MPI_Reduce_local, MPI_SUM): the
// local work of a reduce-scatter round.
void reduce_local_sum(const float* in, float* inout, int64_t count);
// The largest message the transport between ranks on this machine sends
// eagerly (Open MPI: btl_vader_eager_limit, read through MPI_T; the payload
// is this less the protocol header); 0 when the library does not say.
int64_t eager_limit_bytes();

}  // namespace warpnet::dist
