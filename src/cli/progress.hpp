// A one-line progress bar: redrawn in place on a terminal, printed every
// tenth of the way when output goes to a log, so CI logs stay short, and at
// least once a minute, so a slow tenth does not look like a hang. From a
// second in, it says how long it has run and about how long is left (at the
// rate so far).
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace warpnet::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  // `done` of `total`, with a trailing status text (loss, accuracy, speed).
  void update(int64_t done, int64_t total, const std::string& status);
  // Ends the line.
  void finish();

 private:
  std::string label_;
  bool tty_;
  int last_tenth_ = -1;
  std::chrono::steady_clock::time_point last_line_;  // when a log's last line was printed
  bool open_ = false;
  std::optional<std::chrono::steady_clock::time_point> start_;  // construction, or the first update after finish()
};

}  // namespace warpnet::cli
