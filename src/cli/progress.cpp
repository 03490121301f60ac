#include "cli/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace warpnet::cli {

ProgressBar::ProgressBar(std::string label) : label_(std::move(label)), tty_(::isatty(STDOUT_FILENO) != 0) {}

void ProgressBar::update(int64_t done, int64_t total, const std::string& status) {
  constexpr int width = 24;
  const int filled = total > 0 ? static_cast<int>(width * done / total) : width;
  std::string bar(filled, '#');
  bar.resize(width, '.');
  const std::string after = status.empty() ? "" : "  " + status;
  if (tty_) {
    std::printf("\r%s [%s] %lld/%lld%s\033[K", label_.c_str(), bar.c_str(), static_cast<long long>(done),
                static_cast<long long>(total), after.c_str());
    std::fflush(stdout);
    open_ = true;
    return;
  }
  const int tenth = total > 0 ? static_cast<int>(10 * done / total) : 10;
  if (tenth == last_tenth_) return;
  last_tenth_ = tenth;
  std::printf("%s [%s] %lld/%lld%s\n", label_.c_str(), bar.c_str(), static_cast<long long>(done),
              static_cast<long long>(total), after.c_str());
  std::fflush(stdout);
}

void ProgressBar::finish() {
  if (tty_ && open_) std::printf("\n");
  open_ = false;
  last_tenth_ = -1;
}

}  // namespace warpnet::cli
