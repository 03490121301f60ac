// What the lesson programs share to check the claims of their chapter and to
// print figures: every failed check is counted, and the program's exit status
// (finish_checks) is what the chapter's CTest test asserts.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

namespace warpnet::lesson {

// Checks failed so far in this program.
inline int& failures() {
  static int count = 0;
  return count;
}

// "ok" or "FAIL", for a figure printed beside its check; counts a failure.
inline const char* check(bool ok) {
  if (!ok) ++failures();
  return ok ? "ok" : "FAIL";
}

// Counts a failure and says which claim of the chapter did not hold.
inline void expect(bool ok, const std::string& claim) {
  if (ok) return;
  std::printf("  !! expected: %s\n", claim.c_str());
  ++failures();
}

// Prints the verdict; returns the exit status: 0, or 1 when a check failed.
inline int finish_checks() {
  if (failures() == 0)
    std::printf("All checks passed.\n");
  else
    std::printf("%d CHECK(S) FAILED.\n", failures());
  return failures() == 0 ? 0 : 1;
}

// 3.14159 with digits 2 → "3.14".
inline std::string fixed(double v, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

// 60965224 → "60,965,224".
inline std::string grouped(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out = n < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace warpnet::lesson
