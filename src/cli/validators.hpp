// Checks for numeric options whose errors read well: CLI11's PositiveNumber
// and NonNegativeNumber are ranges up to the largest double, and print all
// 309 of its digits when a value is out of range ("--lr: Value -1 not in
// range 0.000000 to 1797693...").
#pragma once
#include <CLI/CLI.hpp>
#include <cmath>
#include <string>

namespace warpnet::cli {

namespace detail {
// A validator that reads the option's text as a number and asks `ok` of it;
// NaN fails every test.
template <class Ok>
CLI::Validator number_check(Ok ok, const char* rule, const char* name) {
  return CLI::Validator(
      [ok, rule](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
        return ok(value) ? std::string() : std::string(rule) + ", got " + text;
      },
      name);
}
}  // namespace detail

inline const CLI::Validator kPositive =
    detail::number_check([](double v) { return v > 0 && std::isfinite(v); }, "must be positive and finite", "POSITIVE");
inline const CLI::Validator kNonNegative = detail::number_check([](double v) { return v >= 0 && std::isfinite(v); },
                                                                "must be 0 or more and finite", "NONNEGATIVE");

}  // namespace warpnet::cli
