// The label every figure a lesson program measures carries: the CPU it ran
// on, how busy that CPU was, and the date (README figures name their machine).
#pragma once
#include <ctime>
#include <fstream>
#include <string>

namespace warpnet::lesson {

// The first processor's model name in /proc/cpuinfo.
inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      std::string m = line.substr(line.find(':') + 1);
      return m.substr(m.find_first_not_of(' '));
    }
  return "unknown CPU";
}

// The 1-minute load average: on a machine shared with other jobs it says how
// much of the CPU the timings actually had.
inline std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string first;
  return in >> first ? first : "?";
}

// "2026-11-30".
inline std::string today_utc() {
  char date[16];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  return date;
}

}  // namespace warpnet::lesson
