// The formats' facts as a Markdown table, computed from their descriptions:
// src/numeric/README.md holds this output, and tests/numeric checks that it
// still does (WARPNET_UPDATE_README=1 rewrites it).
#pragma once
#include <span>
#include <string>

#include "numeric/format.hpp"

namespace warpnet::numeric {

// One row per format: bits (sign.exponent.mantissa), bias, inf, NaN codes,
// max finite, min normal, min subnormal, epsilon.
std::string markdown_table(std::span<const Format* const> formats = kAllFormats);
// A value as the table shows it: 2^k for powers of two (with the decimal
// value when |k| > 4), else 8 significant digits.
std::string show_value(double v);

}  // namespace warpnet::numeric
