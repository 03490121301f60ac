// What each bit of a binary floating-point format means: fp32, tf32, fp16,
// bf16, fp8 (e4m3, e5m2), fp4 (e2m1) and e8m0, the scale of the OCP
// microscaling (MX) formats. A Format is a plain description; convert.hpp
// turns numbers into its codes and back, scaling.hpp adds per-tensor and
// per-block (MX) scales, table.hpp prints the facts below (README.md).
//
// References:
// - IEEE 754-2019 (fp32, fp16; bf16 and tf32 follow its rules with fp32's
//   8-bit exponent and 7 or 10 mantissa bits).
// - OCP 8-bit Floating Point Specification (OFP8), rev 1.0, 2023: e4m3 has no
//   inf and one NaN per sign (S.1111.111), so its top binade reaches 448;
//   e5m2 is IEEE-like (inf S.11111.00, NaN S.11111.{01,10,11}), max 57344.
// - OCP Microscaling Formats (MX) v1.0, 2023: e2m1 (section 5.3.3, Table 5:
//   bias 1, no inf, no NaN, max 6) and e8m0 (section 5.4.1, Table 7: unsigned,
//   exponent only, bias 127, 2^-127..2^127, no zero, no inf, NaN 0xFF).
//
// The constants are literal types with no out-of-line code, so this header is
// safe in nvcc-compiled files (the kernel registry names formats by address).
#pragma once
#include <cstdint>

namespace warpnet::numeric {

// What the all-ones exponent field holds.
enum class Specials : uint8_t {
  ieee,    // inf (mantissa 0) and NaN (mantissa != 0), as IEEE 754: fp32, tf32, fp16, bf16, e5m2
  fn,      // finite numbers, except the all-ones code S.1..1.1..1, the NaN; no inf: e4m3, e8m0
  finite,  // every code is a finite number; no inf, no NaN: e2m1
};

struct Format {
  const char* name;
  int exponent;     // exponent field width in bits
  int mantissa;     // trailing significand (mantissa) field width in bits
  int bias;         // exponent field value of 2^0
  bool is_signed;   // a sign bit above the exponent (e8m0 has none)
  bool subnormals;  // field 0 holds zero and subnormals (e8m0: field 0 is the normal 2^-127)
  Specials specials;
};

inline constexpr Format kFp32{"fp32", 8, 23, 127, true, true, Specials::ieee};
// tf32: fp32's range with fp16's precision (19 bits, kept in a 32-bit word on the GPU).
inline constexpr Format kTf32{"tf32", 8, 10, 127, true, true, Specials::ieee};
inline constexpr Format kFp16{"fp16", 5, 10, 15, true, true, Specials::ieee};
inline constexpr Format kBf16{"bf16", 8, 7, 127, true, true, Specials::ieee};
inline constexpr Format kE4M3{"e4m3", 4, 3, 7, true, true, Specials::fn};
inline constexpr Format kE5M2{"e5m2", 5, 2, 15, true, true, Specials::ieee};
inline constexpr Format kE2M1{"e2m1", 2, 1, 1, true, true, Specials::finite};
inline constexpr Format kE8M0{"e8m0", 8, 0, 127, false, false, Specials::fn};

// Every format, in the order of the README's table.
inline constexpr const Format* kAllFormats[] = {&kFp32, &kTf32, &kFp16, &kBf16, &kE4M3, &kE5M2, &kE2M1, &kE8M0};

// ---- facts derived from the description ----------------------------------

constexpr int bits(const Format& f) { return int(f.is_signed) + f.exponent + f.mantissa; }
constexpr uint32_t sign_bit(const Format& f) { return f.is_signed ? 1u << (f.exponent + f.mantissa) : 0u; }
// The bits below the sign: codes of the magnitudes.
constexpr uint32_t magnitude_mask(const Format& f) { return (1u << (f.exponent + f.mantissa)) - 1; }
constexpr uint32_t mantissa_mask(const Format& f) { return (1u << f.mantissa) - 1; }
constexpr bool has_inf(const Format& f) { return f.specials == Specials::ieee; }
constexpr bool has_nan(const Format& f) { return f.specials != Specials::finite; }

// Magnitude codes grow with the value they stand for, up to this one.
constexpr uint32_t max_code(const Format& f) {
  switch (f.specials) {
    case Specials::ieee:
      return (((1u << f.exponent) - 1) << f.mantissa) - 1;  // below the inf code
    case Specials::fn:
      return magnitude_mask(f) - 1;  // below the NaN code
    case Specials::finite:
      break;
  }
  return magnitude_mask(f);
}
constexpr uint32_t inf_code(const Format& f) { return ((1u << f.exponent) - 1) << f.mantissa; }  // ieee only
// The NaN this library produces: all ones, sign clear (as CUDA's conversions
// from float do: 0x7FFF for fp16 and bf16, 0x7F for both fp8; its double
// entry points to fp8 keep the sign, and give e5m2 0x7E). e2m1 has none: NaN becomes
// +max (6), as CUDA's __nv_cvt_float_to_fp4 does.
constexpr uint32_t canonical_nan(const Format& f) { return has_nan(f) ? magnitude_mask(f) : max_code(f); }
constexpr bool is_nan_code(const Format& f, uint32_t code) {
  const uint32_t m = code & magnitude_mask(f);
  switch (f.specials) {
    case Specials::ieee:
      return m > inf_code(f);
    case Specials::fn:
      return m == magnitude_mask(f);
    case Specials::finite:
      break;
  }
  return false;
}

// Unbiased exponents: of the smallest normal and of the largest finite value
// (emax is the MX spec's emax_elem: 8 for e4m3, 15 for e5m2, 2 for e2m1).
constexpr int emin(const Format& f) { return (f.subnormals ? 1 : 0) - f.bias; }
constexpr int emax(const Format& f) { return int(max_code(f) >> f.mantissa) - f.bias; }

// 2^k, exactly, at compile time.
constexpr double pow2(int k) {
  double v = 1;
  for (; k > 0; --k) v *= 2;
  for (; k < 0; ++k) v /= 2;
  return v;
}
constexpr double max_finite(const Format& f) {
  return double((max_code(f) & mantissa_mask(f)) + (1u << f.mantissa)) * pow2(emax(f) - f.mantissa);
}
constexpr double min_normal(const Format& f) { return pow2(emin(f)); }
// 0 where there are no subnormals (e8m0).
constexpr double min_subnormal(const Format& f) { return f.subnormals ? pow2(emin(f) - f.mantissa) : 0.0; }
// The gap between 1 and the next larger value.
constexpr double epsilon(const Format& f) { return pow2(-f.mantissa); }

static_assert(max_finite(kE4M3) == 448 && max_finite(kE5M2) == 57344 && max_finite(kE2M1) == 6);
static_assert(max_finite(kFp16) == 65504 && emax(kE8M0) == 127 && min_normal(kE8M0) == pow2(-127));
static_assert(min_subnormal(kE4M3) == pow2(-9) && min_subnormal(kE2M1) == 0.5);

}  // namespace warpnet::numeric
