#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/error.hpp"
#include "core/host_memory.hpp"
#include "core/memory.hpp"

namespace warpnet {

namespace {

// The temporary file being written, for the signal handler below: a run
// stopped by Ctrl-C or `kill` while it writes a 100 MB checkpoint leaves
// neither a half-written checkpoint (the rename never happens) nor the
// partial temporary file. Only async-signal-safe calls in the handler. One
// write at a time (warpnet writes files from one thread): a second guard
// while one is active leaves its file unguarded rather than chain handlers.
char g_writing[4096];
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[std::size(kSignals)];
bool g_guarded[std::size(kSignals)];  // false: the signal is ignored (a background job's SIGINT) and stays so

void remove_partial_write(int signal) {
  const int saved_errno = errno;
  if (g_writing[0]) ::unlink(g_writing);
  for (size_t i = 0; i < std::size(kSignals); ++i)
    if (kSignals[i] == signal) ::sigaction(signal, &g_previous[i], nullptr);
  ::raise(signal);  // what the signal would have done: the previous handler, or the end of the process
  errno = saved_errno;
}

// This process's temporary files are path.tmp.<host>.<pid>: a pid names a
// process only on its own machine (a shared folder may hold other hosts').
std::string temporary_name(const std::string& path) {
  char host[256] = "host";
  ::gethostname(host, sizeof host - 1);
  return path + ".tmp." + host + "." + std::to_string(::getpid());
}

// While alive, the signals above remove `tmp` before they act.
class PartialWriteGuard {
 public:
  explicit PartialWriteGuard(const std::string& tmp) {
    if (tmp.size() >= sizeof g_writing || g_writing[0]) return;  // too long to keep, or another write guarded
    std::memcpy(g_writing, tmp.c_str(), tmp.size() + 1);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the name is whole before a handler can read it
    struct sigaction action {};
    action.sa_handler = remove_partial_write;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < std::size(kSignals); ++i) {
      ::sigaction(kSignals[i], nullptr, &g_previous[i]);
      g_guarded[i] = g_previous[i].sa_handler != SIG_IGN;
      if (g_guarded[i]) ::sigaction(kSignals[i], &action, nullptr);
    }
    active_ = true;
  }
  ~PartialWriteGuard() {
    if (!active_) return;
    for (size_t i = 0; i < std::size(kSignals); ++i)
      if (g_guarded[i]) ::sigaction(kSignals[i], &g_previous[i], nullptr);
    g_writing[0] = 0;
  }
  PartialWriteGuard(const PartialWriteGuard&) = delete;
  PartialWriteGuard& operator=(const PartialWriteGuard&) = delete;

 private:
  bool active_ = false;
};

// Temporary files of `path` written on this machine (path.tmp.<host>.<pid>)
// whose writer no longer runs: left by a process killed outright (SIGKILL,
// a power cut) mid-write.
void remove_stale_partial_writes(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  const std::string mine = fs::path(temporary_name(path)).filename().string();
  const std::string prefix = mine.substr(0, mine.rfind('.') + 1);  // "run.ckpt.tmp.<host>."
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9) continue;
    if (::kill(pid_t(std::stol(pid)), 0) == 0 || errno != ESRCH) continue;  // its writer still runs (or may)
    std::error_code removed;
    if (fs::remove(entry.path(), removed))
      std::fprintf(stderr, "warpnet: removed %s, the partial write of a process that no longer runs\n",
                   entry.path().c_str());
  }
}

// Where a write of `path` lands: the file a symbolic link names (the link is
// kept, as a plain write through it would keep it), else `path`. A device,
// pipe or socket there, and a file the user made read-only, are refused:
// the rename would replace them regardless (it needs only the folder's
// permission).
std::string write_target(const std::string& path, std::string_view what) {
  namespace fs = std::filesystem;
  // What is there, through any links as the kernel follows them: a pipe
  // behind /dev/stdout's links included, which no path names.
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  // The rename puts a regular file in place of a device, pipe or socket: a
  // FIFO named by `op --out` was replaced, and as root /dev/null would be.
  const bool special = exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);  // (a directory: the callers' own message)
  auto refuse_special = [&](const std::string& name) {
    fail(what, name, ": not a regular file (a device, pipe or socket), and the write would replace it with one; "
         "name a file");
  };
  std::error_code ec;
  std::string target = path;
  if (fs::is_symlink(path, ec)) {  // (ec: no such file, or nothing to look at: not a link)
    // Link by link, each read from its own folder: weakly_canonical stops
    // before a link whose file does not exist yet, and the rename then
    // replaced the link itself with a plain file.
    fs::path at = path;
    for (int links = 0; !exists && fs::is_symlink(at, ec); ++links) {
      if (links == 40) fail(what, path, ": too many levels of symbolic links");  // as the kernel's ELOOP
      const fs::path next = fs::read_symlink(at, ec);
      if (ec) fail(what, path, ": cannot follow the link: ", ec.message());
      at = next.is_absolute() ? next : at.parent_path() / next;
    }
    target = fs::weakly_canonical(at, ec).string();  // the folders' own links resolved
    if (ec && special) refuse_special(path);  // a pipe behind /dev/stdout: "pipe:[...]" is no path
    if (ec) fail(what, path, ": cannot follow the link: ", ec.message());
  }
  if (special) refuse_special(target);
  // `--report /dev/stdout` with the output sent to a file: the rename would
  // put the report in place of the whole log (still empty when checked).
  for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat stream {};
    if (exists && ::fstat(fd, &stream) == 0 && stream.st_dev == st.st_dev && stream.st_ino == st.st_ino)
      fail(what, path, ": it is this program's standard ", fd == STDOUT_FILENO ? "output" : "error",
           ", whose file the write would replace with its own; name another file");
  }
  // By its mode bits, not access(W_OK): root may write anything, and a
  // checkpoint made read-only is meant to stay as it is for root too.
  if (exists && (st.st_mode & 0222) == 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", unsigned(st.st_mode & 0777));
    fail(what, target, ": the file is read-only (mode ", mode, "); it is left as it is");
  }
  return target;
}

// A file at `target` that does not begin as `kind`'s do (an empty one
// passes) is some other thing of the user's, left as it is.
void refuse_another_kind(const std::string& target, const std::string& path, std::string_view what,
                         const FileKind& kind) {
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) return;  // nothing there yet
  std::ifstream in(target, std::ios::binary);
  if (!in) fail(what, " ", path, ": the file exists and cannot be read to see what it holds: ", std::strerror(errno));
  std::string head(kind.magic.size(), '\0');
  in.read(head.data(), std::streamsize(head.size()));
  head.resize(size_t(in.gcount()));
  if (head.empty() || head == kind.magic) return;
  fail(what, " ", path, ": the file exists and is not ", kind.name, " (", what,
       " writes one, which would replace it); it is left as it is: remove it or name another file");
}

// After a rename, the folder's entry must reach the disk too, or a power cut
// can lose the new name.
void sync_directory_of(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const int fd = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;  // best effort: the data itself is synced
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void write_file_atomically(const std::string& requested, std::string_view bytes) {
  write_file_atomically(requested, {bytes});
}

void write_file_atomically(const std::string& requested, std::initializer_list<std::string_view> parts) {
  const std::string path = write_target(requested, "");
  const std::string tmp = temporary_name(path);
  const PartialWriteGuard guard(tmp);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail(path, ": cannot create ", tmp, ": ", std::strerror(errno));
  // A file replaced keeps its permissions: a private (0600) checkpoint
  // must not come back readable by all.
  struct stat before{};
  if (::stat(path.c_str(), &before) == 0 && S_ISREG(before.st_mode)) ::fchmod(fd, before.st_mode & 07777);
  size_t done = 0;  // over all parts, for the error
  for (const std::string_view bytes : parts)
    for (size_t written = 0; written < bytes.size();) {
      ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
      if (n < 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        fail(path, ": write failed after ", done, " bytes: ", std::strerror(err));
      }
      written += static_cast<size_t>(n);
      done += static_cast<size_t>(n);
    }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail(path, ": flushing ", tmp, " failed: ", std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail(path, ": rename from ", tmp, " failed: ", std::strerror(err));
  }
  sync_directory_of(path);
}

void create_parent_directories(const std::string& path, std::string_view what) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) fail(what, " ", path, ": cannot create the directory ", parent.string(), ": ", ec.message());
}

void prepare_output_file(const std::string& path, std::string_view what, const FileKind& kind) {
  if (path.empty()) fail(what, ": an empty path; name a file");
  create_parent_directories(path, what);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(what, " ", path, ": is a directory; name a file");
  if (ec && ec != std::errc::no_such_file_or_directory) fail(what, " ", path, ": cannot look at it: ", ec.message());
  const std::string target = write_target(path, std::string(what) + " ");
  refuse_another_kind(target, path, what, kind);
  remove_stale_partial_writes(target);
  const std::string probe = temporary_name(target);
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail(what, " ", path, ": cannot write there: ", std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

bool path_exists(const std::string& path) {
  std::error_code ec;
  const bool there = std::filesystem::exists(path, ec);
  if (ec) fail(path, ": cannot look at it: ", ec.message());
  return there;
}

bool names_same_file(const std::string& a, const std::string& b) {
  std::error_code ec_a, ec_b;
  const std::filesystem::path ca = std::filesystem::weakly_canonical(a, ec_a);
  const std::filesystem::path cb = std::filesystem::weakly_canonical(b, ec_b);
  return !ec_a && !ec_b && ca == cb;
}

void require_regular_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) fail(path, ": cannot look at it: ", ec.message());
  if (!std::filesystem::exists(status)) fail(path, ": cannot open: ", std::strerror(ENOENT));
  if (std::filesystem::is_directory(status)) fail(path, ": is a directory, not a file");
  if (!std::filesystem::is_regular_file(status))
    fail(path, ": not a regular file (a pipe, socket or device: reading it could wait for ever)");
}

std::string read_file(const std::string& path, std::string_view magic) {
  require_regular_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, ": cannot open: ", std::strerror(errno));
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) fail(path, ": cannot tell its size: ", ec.message());
  std::string bytes(std::min<uintmax_t>(size, magic.size()), '\0');
  in.read(bytes.data(), std::streamsize(bytes.size()));
  if (magic.substr(0, bytes.size()) != bytes) return bytes;  // another kind of file: the caller says so
  if (const std::string why = host_allocation_refusal(int64_t(std::min<uintmax_t>(size, INT64_MAX))); !why.empty())
    fail(path, ": ", format_bytes(int64_t(std::min<uintmax_t>(size, INT64_MAX))), " to read, and ", why);
  try {
    bytes.resize(size);
  } catch (const std::bad_alloc&) {
    fail(path, ": ", size, " bytes, more than this process can hold in memory");
  }
  const size_t start = std::min<uintmax_t>(size, magic.size());
  in.read(bytes.data() + start, std::streamsize(size - start));
  // (Shorter than its size said: it shrank while read. A longer one is read to that size.)
  if (size_t(in.gcount()) != size - start && size != start) fail(path, ": changed while it was read");
  return bytes;
}

}  // namespace warpnet
