#include "numeric/table.hpp"

#include <cmath>
#include <cstdio>

#include "core/error.hpp"

namespace warpnet::numeric {
namespace {

std::string nan_codes(const Format& f) {
  const std::string sign = f.is_signed ? "S." : "";
  char canonical[16];
  std::snprintf(canonical, sizeof canonical, "0x%X", canonical_nan(f));
  switch (f.specials) {
    case Specials::ieee:
      return sign + std::string(size_t(f.exponent), '1') + ".(not 0), makes " + canonical;
    case Specials::fn:
      return sign + std::string(size_t(f.exponent), '1') + (f.mantissa ? "." : "") +
             std::string(size_t(f.mantissa), '1') + ", makes " + canonical;
    case Specials::finite:
      break;
  }
  return "none (NaN makes +max)";
}

}  // namespace

std::string show_value(double v) {
  if (v == 0) return "none";
  int e = 0;
  if (std::frexp(v, &e) == 0.5) {
    const int k = e - 1;
    if (std::abs(k) <= 4) return cat(v);
    char decimal[32];
    std::snprintf(decimal, sizeof decimal, "%.8g", v);
    return cat("2^", k, " (", decimal, ")");
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.8g", v);
  return text;
}

std::string markdown_table(std::span<const Format* const> formats) {
  std::string out =
      "| format | bits s.e.m | bias | inf | NaN codes | max finite | min normal | min subnormal | epsilon |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  for (const Format* f : formats)
    out +=
        cat("| ", f->name, " | ", int(f->is_signed), ".", f->exponent, ".", f->mantissa, " | ", f->bias, " | ",
            has_inf(*f) ? "yes" : "no", " | ", nan_codes(*f), " | ", show_value(max_finite(*f)), " | ",
            show_value(min_normal(*f)), " | ", show_value(min_subnormal(*f)), " | ", show_value(epsilon(*f)), " |\n");
  return out;
}

}  // namespace warpnet::numeric
