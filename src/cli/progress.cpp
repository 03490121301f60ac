#include "cli/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace warpnet::cli {
namespace {

// "42 s", "3 min 05 s", "1 h 02 min".
std::string duration_text(double seconds) {
  char buf[32];
  const long s = long(seconds + 0.5);
  if (s < 60) std::snprintf(buf, sizeof buf, "%ld s", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ld h %02ld min", s / 3600, s / 60 % 60);
  return buf;
}

}  // namespace

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), tty_(::isatty(STDOUT_FILENO) != 0), start_(std::chrono::steady_clock::now()) {}

void ProgressBar::update(int64_t done, int64_t total, const std::string& status) {
  constexpr int width = 24;
  const int filled = total > 0 ? static_cast<int>(width * done / total) : width;
  std::string bar(filled, '#');
  bar.resize(width, '.');
  std::string after = status.empty() ? "" : "  " + status;
  const auto now = std::chrono::steady_clock::now();
  if (!start_) start_ = now;  // the first update after finish()
  const double elapsed = std::chrono::duration<double>(now - *start_).count();
  if (elapsed >= 1 && done > 0 && total > 0) {
    after += "  " + duration_text(elapsed);
    if (done < total) after += ", about " + duration_text(elapsed * double(total - done) / double(done)) + " left";
  }
  if (tty_) {
    std::printf("\r%s [%s] %lld/%lld%s\033[K", label_.c_str(), bar.c_str(), static_cast<long long>(done),
                static_cast<long long>(total), after.c_str());
    std::fflush(stdout);
    open_ = true;
    return;
  }
  const int tenth = total > 0 ? static_cast<int>(10 * done / total) : 10;
  if (tenth == last_tenth_ && now - last_line_ < std::chrono::minutes(1)) return;
  last_tenth_ = tenth;
  last_line_ = now;
  std::printf("%s [%s] %lld/%lld%s\n", label_.c_str(), bar.c_str(), static_cast<long long>(done),
              static_cast<long long>(total), after.c_str());
  std::fflush(stdout);
}

void ProgressBar::finish() {
  if (tty_ && open_) std::printf("\n");
  open_ = false;
  last_tenth_ = -1;
  start_.reset();
}

}  // namespace warpnet::cli
