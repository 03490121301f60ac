// Checks for numeric options whose errors read well: CLI11's PositiveNumber
// and NonNegativeNumber are ranges up to the largest double, and print all
// 309 of its digits when a value is out of range ("--lr: Value -1 not in
// range 0.000000 to 1797693...").
#pragma once
#include <CLI/CLI.hpp>
#include <charconv>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace warpnet::cli {

namespace detail {
// A validator that reads the option's text as a number and asks `ok` of it;
// NaN fails every test.
template <class Ok>
CLI::Validator number_check(Ok ok, std::string rule, const char* name) {
  return CLI::Validator(
      [ok, rule](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
        return ok(value) ? std::string() : rule + ", got " + text;
      },
      name);
}
inline std::string shortest(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}
}  // namespace detail

inline const CLI::Validator kPositive =
    detail::number_check([](double v) { return v > 0 && std::isfinite(v); }, "must be positive and finite", "POSITIVE");
// A value the kernels hold in float (a learning rate): below FLT_MIN it would be
// a denormal, which the CPU backend reads as zero (DAZ, cpu/parallel.cpp).
inline const CLI::Validator kPositiveFloat = detail::number_check(
    [](double v) { return v >= FLT_MIN && v <= FLT_MAX; },
    "must be a positive float, from FLT_MIN (about 1.2e-38) to FLT_MAX (about 3.4e+38)", "POSITIVE");
inline const CLI::Validator kNonNegative = detail::number_check([](double v) { return v >= 0 && std::isfinite(v); },
                                                                "must be 0 or more and finite", "NONNEGATIVE");
// A file to write: an empty path ('' from a script's unset variable) would
// otherwise mean "no file" for some options and a file named "" for others.
inline const CLI::Validator kOutputPath = CLI::Validator(
    [](std::string& text) -> std::string { return text.empty() ? "an empty path; name a file" : std::string(); },
    "FILE");
// A folder to read: an empty one ('' from a script's unset variable) would
// otherwise mean the default folder, without a word.
inline const CLI::Validator kInputFolder = CLI::Validator(
    [](std::string& text) -> std::string { return text.empty() ? "an empty path; name a folder" : std::string(); },
    "DIR");

// A seed: a whole number from 0 to 2^64 − 1, written out (CLI11 reads "-1"
// and "1e23" into a uint64_t as 2^64 − 1 without a word).
inline const CLI::Validator kSeed = CLI::Validator(
    [](std::string& text) -> std::string {
      uint64_t value = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || error != std::errc() || end != text.data() + text.size())
        return "a seed is a whole number from 0 to 18446744073709551615, got " + text;
      return {};
    },
    "SEED");

// A whole number lo <= value <= hi, for an option held in an integer, written
// out: CLI11 said only "Could not convert: --pad = 2.5", answered a batch
// size of 2.5 with "Value 2.5 not in range 1 to 65536", and read
// --limit 99999999999999999999 as 2^63 − 1 without a word.
inline CLI::Validator whole_in_range(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        int64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < lo || value > hi)
          return "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + text;
        return {};
      },
      "INT");
}
inline constexpr int64_t kIntMax = 2147483647;  // an option held in an int

// lo <= value <= hi, NaN refused (CLI::Range lets NaN through: every comparison with it is false).
inline CLI::Validator in_range(double lo, double hi) {
  return detail::number_check([lo, hi](double v) { return v >= lo && v <= hi; },
                              "must be from " + detail::shortest(lo) + " to " + detail::shortest(hi), "RANGE");
}

}  // namespace warpnet::cli
