// dist/communicator.hpp over MPI (Open MPI 4.1 on Debian; any MPI-3 library).
//
// Every collective is started non-blocking (MPI_I...) and completed by a loop
// of MPI_Testall with a deadline, for two reasons: Open MPI progresses a
// non-blocking collective only inside MPI calls, so the loop is what moves
// the data; and a rank that has died or hangs turns into a message and
// MPI_Abort after `timeout_s` instead of a job that waits forever.
#if WARPNET_HAS_MPI
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"
#include "dist/communicator.hpp"

namespace warpnet::dist {

namespace {

struct State {
  bool active = false;
  int rank = 0, size = 1, local_size = 1, local_rank = 0;
  double timeout_s = 120;
  // Pending's requests by slot (a count above INT_MAX is several requests).
  std::vector<std::vector<MPI_Request>> slots;
  std::vector<int> free_slots;
  // A duplicate of MPI_COMM_WORLD for the roll call below: its messages can
  // never match those of the collectives, whatever tags those use.
  MPI_Comm control = MPI_COMM_NULL;
};

State& state() {
  static State s;
  return s;
}

// The activity line and the "warpnet: rank R of N: " prefix, read by the
// signal handler. Two buffers and an index: set_activity writes the one not
// in use and then flips the index, so a signal never reads a half-written line.
char g_prefix[64] = "warpnet: ";
char g_activity[2][192] = {{"starting"}, {"starting"}};
std::atomic<int> g_activity_index{0};

void write_all(const char* s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

// mpirun sends SIGTERM to the surviving ranks when one dies: say which rank
// this is and what it was doing, then leave (write and _exit are
// async-signal-safe; printf is not).
extern "C" void on_termination(int sig) {
  write_all(g_prefix);
  write_all(sig == SIGTERM ? "ended by SIGTERM" : sig == SIGINT ? "ended by SIGINT" : "ended by a signal");
  write_all(" during ");
  write_all(g_activity[g_activity_index.load()]);
  write_all(" (sent by mpirun after another rank failed, whose message above or below names it, or sent to this "
            "rank itself)\n");
  ::_exit(128 + sig);
}

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<size_t>(length));
}

// MPI_ERRORS_RETURN is set on MPI_COMM_WORLD: a failing call returns here,
// and the job ends with this rank's name on the message.
void check(int code, const char* call) {
  if (code != MPI_SUCCESS) abort_job(cat(call, " failed during ", g_activity[g_activity_index.load()], ": ", mpi_error(code)));
}

void require_session(const char* what) {
  WN_CHECK(state().active, "dist: ", what, " needs a dist::Session (MPI is not initialised)");
}

// MPI counts are int: a larger buffer goes as several requests.
template <class T, class Start>
std::vector<MPI_Request> start_chunked(T* data, int64_t count, Start&& start) {
  std::vector<MPI_Request> requests;
  for (int64_t done = 0; done < count;) {
    const int n = static_cast<int>(std::min<int64_t>(count - done, INT_MAX));
    requests.emplace_back();
    start(data + done, n, &requests.back());
    done += n;
  }
  return requests;
}

// ---- the roll call: which rank hangs ------------------------------------------
//
// A collective that times out knows only that some rank did not join. To
// name it, the waiting rank asks every other rank for its activity over the
// control communicator; a rank that is alive and waiting in a collective
// answers from its own wait loop (answer_roll_call), one that hangs, or is
// stuck outside MPI, does not. A rank busy computing answers when it next
// waits, so the asking rank gives the answers a grace period.
constexpr int kRollCallTag = 1, kAnswerTag = 2;
constexpr double kRollCallGraceS = 2.0;

// Answers every roll call that has arrived: this rank's activity line.
void answer_roll_call() {
  const State& s = state();
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kRollCallTag, s.control, &arrived, &status);
    if (!arrived) return;
    int asked = 0;
    MPI_Recv(&asked, 1, MPI_INT, status.MPI_SOURCE, kRollCallTag, s.control, MPI_STATUS_IGNORE);
    // The answer is small, so it goes eagerly and this send does not wait
    // for the asking rank (which may be aborting already).
    MPI_Request request;
    MPI_Isend(g_activity[g_activity_index.load()], sizeof g_activity[0], MPI_CHAR, status.MPI_SOURCE, kAnswerTag,
              s.control, &request);
    MPI_Request_free(&request);
  }
}

// Asks every other rank what it is doing; returns "rank 1 did not answer
// (...); rank 2 answered: <activity>" for the abort message.
std::string roll_call() {
  const State& s = state();
  std::vector<char> answers(static_cast<size_t>(s.size) * sizeof g_activity[0], '\0');
  std::vector<MPI_Request> asks, waits;
  std::vector<int> peer_of;  // waits[i] is the answer of rank peer_of[i]
  int dummy = 0;
  for (int r = 0; r < s.size; ++r) {
    if (r == s.rank) continue;
    asks.emplace_back();
    MPI_Isend(&dummy, 1, MPI_INT, r, kRollCallTag, s.control, &asks.back());
    waits.emplace_back();
    MPI_Irecv(answers.data() + static_cast<size_t>(r) * sizeof g_activity[0], sizeof g_activity[0], MPI_CHAR, r,
              kAnswerTag, s.control, &waits.back());
    peer_of.push_back(r);
  }
  std::vector<int> answered(waits.size(), 0);
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < kRollCallGraceS) {
    bool all = true;
    for (size_t i = 0; i < waits.size(); ++i) {
      if (!answered[i]) MPI_Test(&waits[i], &answered[i], MPI_STATUS_IGNORE);
      all = all && answered[i];
    }
    if (all) break;
    answer_roll_call();  // two ranks may ask each other at once
    sched_yield();
  }
  std::string silent, alive;
  for (size_t i = 0; i < waits.size(); ++i) {
    const int r = peer_of[i];
    if (answered[i]) {
      alive += cat("; rank ", r, " is alive, ", answers.data() + static_cast<size_t>(r) * sizeof g_activity[0]);
    } else {
      silent += cat(silent.empty() ? "" : ", ", r);
      MPI_Cancel(&waits[i]);  // the job ends next; nothing more will arrive
    }
  }
  for (MPI_Request& a : asks) MPI_Request_free(&a);
  if (silent.empty()) return cat("every other rank answered within ", kRollCallGraceS, " s", alive);
  return cat("rank", silent.find(',') == std::string::npos ? " " : "s ", silent, " did not answer within ",
             kRollCallGraceS, " s: it hangs or is stuck outside MPI", alive);
}

void wait_all(std::vector<MPI_Request>& requests) {
  if (requests.empty()) return;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    int done = 0;
    check(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
          "MPI_Testall");
    if (done) return;
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > state().timeout_s)
      abort_job(cat("waited ", state().timeout_s, " s during ", g_activity[g_activity_index.load()],
                    " and the other ranks did not join; ", roll_call(),
                    " (a rank that died is named by mpirun's message); ending the job"));
    // Spinning is what MPI_Wait does too; past a millisecond, let another
    // process have the core (ranks may outnumber cores: --oversubscribe),
    // and answer another rank's roll call (the fast path never pays for it).
    if (waited > 1e-3) {
      answer_roll_call();
      sched_yield();
    }
  }
}

}  // namespace

bool mpi_available() { return true; }

std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, static_cast<size_t>(length));
  const size_t line = s.find_first_of("\r\n");
  if (line != std::string::npos) s.resize(line);
  const size_t comma = s.find(", package");  // Open MPI appends its package and date
  if (comma != std::string::npos) s.resize(comma);
  return s;
}

Session::Session(double timeout_s) {
  State& s = state();
  int initialized = 0;
  MPI_Initialized(&initialized);
  WN_CHECK(!initialized && !s.active, "dist: MPI is already initialised (one dist::Session per process)");
  WN_CHECK(timeout_s > 0, "dist: the timeout must be positive, got ", timeout_s);
#ifdef OPEN_MPI
  // Open MPI's non-blocking all-reduce (coll/libnbc) chooses its algorithm
  // by size and rank count; on 2 ranks of the 2-core CI machine its ring
  // took 224 us for 1 MiB and 541 us for 4 MiB, against 316 and 1411 us for
  // the default choice (a standalone MPI program, quiet machine,
  // 2026-11-30), and the ring is what dist/cost_model.hpp describes. A value
  // set by the user (mpirun --mca, environment) wins.
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "ring", 0);
#endif
  int provided = 0;
  WN_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) == MPI_SUCCESS,
           "dist: MPI_Init_thread failed");
  WN_CHECK(provided >= MPI_THREAD_FUNNELED, "dist: this MPI gives thread level ", provided,
           ", below MPI_THREAD_FUNNELED (the main thread calls MPI while OpenMP threads compute)");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_dup(MPI_COMM_WORLD, &s.control);
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, s.rank, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &s.local_size);
  MPI_Comm_rank(node, &s.local_rank);  // by world rank (the split's key), whatever mpirun's mapping
  MPI_Comm_free(&node);
  s.timeout_s = timeout_s;
  s.active = true;
  std::snprintf(g_prefix, sizeof g_prefix, "warpnet: rank %d of %d: ", s.rank, s.size);
  set_activity("setup");
  struct sigaction action {};
  action.sa_handler = on_termination;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

Session::~Session() {
  State& s = state();
  signal(SIGTERM, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  s.active = false;
  MPI_Comm_free(&s.control);
  MPI_Finalize();
}

bool active() { return state().active; }
int rank() { return state().rank; }
int size() { return state().size; }
int local_size() { return state().local_size; }
int local_rank() { return state().local_rank; }
double timeout_s() { return state().timeout_s; }

void set_activity(const std::string& what) {
  const int next = 1 - g_activity_index.load();
  std::snprintf(g_activity[next], sizeof g_activity[next], "%s", what.c_str());
  g_activity_index.store(next);
}

std::string whoami() { return state().size > 1 ? cat("rank ", state().rank, " of ", state().size) : ""; }

void abort_job(const std::string& message, int exit_code) {
  const std::string who = whoami();
  std::fprintf(stderr, "warpnet: %s%s%s\n", who.c_str(), who.empty() ? "" : ": ", message.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  if (state().active) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

Pending& Pending::operator=(Pending&& other) noexcept {
  if (this != &other) {
    if (valid()) wait();
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

Pending::~Pending() {
  if (valid()) wait();
}

bool Pending::test() {
  if (!valid()) return true;
  std::vector<MPI_Request>& requests = state().slots[static_cast<size_t>(slot_)];
  int done = 0;
  check(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
  return done != 0;
}

void Pending::wait() {
  if (!valid()) return;
  State& s = state();
  wait_all(s.slots[static_cast<size_t>(slot_)]);
  s.slots[static_cast<size_t>(slot_)].clear();
  s.free_slots.push_back(slot_);
  slot_ = -1;
}

Pending start_allreduce_sum(float* data, int64_t count) {
  require_session("an all-reduce");
  State& s = state();
  Pending p;
  if (s.free_slots.empty()) {
    s.slots.emplace_back();
    s.free_slots.push_back(static_cast<int>(s.slots.size()) - 1);
  }
  p.slot_ = s.free_slots.back();
  s.free_slots.pop_back();
  s.slots[static_cast<size_t>(p.slot_)] = start_chunked(data, count, [](float* d, int n, MPI_Request* r) {
    check(MPI_Iallreduce(MPI_IN_PLACE, d, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, r), "MPI_Iallreduce");
  });
  return p;
}

void allreduce_sum(float* data, int64_t count) { start_allreduce_sum(data, count).wait(); }

void allreduce_sum(double* data, int64_t count) {
  require_session("an all-reduce");
  auto requests = start_chunked(data, count, [](double* d, int n, MPI_Request* r) {
    check(MPI_Iallreduce(MPI_IN_PLACE, d, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, r), "MPI_Iallreduce");
  });
  wait_all(requests);
}

void allreduce_max(double* data, int64_t count) {
  require_session("an all-reduce");
  auto requests = start_chunked(data, count, [](double* d, int n, MPI_Request* r) {
    check(MPI_Iallreduce(MPI_IN_PLACE, d, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, r), "MPI_Iallreduce");
  });
  wait_all(requests);
}

void broadcast(void* data, int64_t bytes, int root) {
  require_session("a broadcast");
  auto requests = start_chunked(static_cast<char*>(data), bytes, [root](char* d, int n, MPI_Request* r) {
    check(MPI_Ibcast(d, n, MPI_BYTE, root, MPI_COMM_WORLD, r), "MPI_Ibcast");
  });
  wait_all(requests);
}

std::vector<uint64_t> allgather(uint64_t value) {
  require_session("an all-gather");
  std::vector<uint64_t> all(static_cast<size_t>(state().size));
  std::vector<MPI_Request> requests(1);
  check(MPI_Iallgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD, &requests[0]),
        "MPI_Iallgather");
  wait_all(requests);
  return all;
}

void barrier() {
  require_session("a barrier");
  std::vector<MPI_Request> requests(1);
  check(MPI_Ibarrier(MPI_COMM_WORLD, &requests[0]), "MPI_Ibarrier");
  wait_all(requests);
}

double wtime() { return MPI_Wtime(); }

void exchange(const void* send, void* receive, int64_t bytes, int peer) {
  require_session("an exchange");
  WN_CHECK(bytes >= 0 && bytes <= INT_MAX, "dist: an exchange moves 0 to ", INT_MAX, " bytes, not ", bytes);
  WN_CHECK(peer >= 0 && peer < state().size && peer != state().rank, "dist: no peer rank ", peer);
  std::vector<MPI_Request> requests(2);
  check(MPI_Irecv(receive, static_cast<int>(bytes), MPI_BYTE, peer, 0, MPI_COMM_WORLD, &requests[0]), "MPI_Irecv");
  check(MPI_Isend(send, static_cast<int>(bytes), MPI_BYTE, peer, 0, MPI_COMM_WORLD, &requests[1]), "MPI_Isend");
  wait_all(requests);
}

void reduce_local_sum(const float* in, float* inout, int64_t count) {
  for (int64_t done = 0; done < count;) {
    const int n = static_cast<int>(std::min<int64_t>(count - done, INT_MAX));
    check(MPI_Reduce_local(in + done, inout + done, n, MPI_FLOAT, MPI_SUM), "MPI_Reduce_local");
    done += n;
  }
}

int64_t eager_limit_bytes() {
  // MPI_T control variables are the standard way to read a library's
  // settings; Open MPI exposes every MCA parameter as one.
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return 0;
  int64_t limit = 0;
  int index = -1;
  if (MPI_T_cvar_get_index("btl_vader_eager_limit", &index) == MPI_SUCCESS) {
    MPI_T_cvar_handle handle;
    int count = 0;
    if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
      // size_t in Open MPI (MPI_UNSIGNED_LONG); an 8-byte zeroed slot holds
      // a 4- or 8-byte unsigned value on this little-endian machine.
      unsigned long long value = 0;
      if (count == 1 && MPI_T_cvar_read(handle, &value) == MPI_SUCCESS) limit = static_cast<int64_t>(value);
      MPI_T_cvar_handle_free(&handle);
    }
  }
  MPI_T_finalize();
  return limit;
}

}  // namespace warpnet::dist
#endif  // WARPNET_HAS_MPI
