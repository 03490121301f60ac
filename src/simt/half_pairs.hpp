// __half2 and __nv_bfloat162 for kernels compiled by g++ without the CUDA
// toolkit (with it, CUDA's own cuda_fp16.h and cuda_bf16.h declare them and
// this file is not read: low_precision.hpp). Two 16-bit values in one 4-byte
// word, low half first, as a GPU's packed instructions (HADD2, HFMA2) see
// them, with the subset of CUDA's functions kernels use: making and taking
// apart pairs, and the arithmetic, each lane rounded once to nearest even.
//
// The scalar arithmetic (__hadd on two __half, ...) and its operators are
// here too, as the toolkit's host-capable headers have them: `a * b + c` on
// __half values rounds after each operation, to __half, and `a + 1.0f` is
// ambiguous, as with nvcc (a kernel that builds here builds for the GPU). The fused multiply-adds, which neither has on the host,
// are in half_fma.hpp.
#pragma once
#include <algorithm>
#include <cmath>
#include <functional>

#include "simt/cuda_types.hpp"

struct __half2_raw {
  unsigned short x, y;
};
struct __nv_bfloat162_raw {
  unsigned short x, y;
};

struct alignas(4) __half2 {
  __half x, y;
  __half2() = default;
  __half2(__half low, __half high) : x(low), y(high) {}
  __half2(__half2_raw r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}
  operator __half2_raw() const { return {__half_raw(x).x, __half_raw(y).x}; }
};

struct alignas(4) __nv_bfloat162 {
  __nv_bfloat16 x, y;
  __nv_bfloat162() = default;
  __nv_bfloat162(__nv_bfloat16 low, __nv_bfloat16 high) : x(low), y(high) {}
  __nv_bfloat162(__nv_bfloat162_raw r) : x(__nv_bfloat16_raw{r.x}), y(__nv_bfloat16_raw{r.y}) {}
  operator __nv_bfloat162_raw() const { return {__nv_bfloat16_raw(x).x, __nv_bfloat16_raw(y).x}; }
};

namespace warpnet::simt::pairs {

// A sum, difference or product of two 16-bit floats is exact in double, so
// rounding it to the format is the one rounding CUDA's instruction makes. A
// quotient is rounded to double first, then to the format, which gives the
// once-rounded quotient all the same: for +, -, ×, ÷ and square roots of
// p-bit values, an intermediate of at least 2p + 2 bits never turns a
// second rounding wrong (Figueroa, "When is double rounding innocuous?",
// 1995); double's 53 are far more than fp16's 24 or bf16's 18. (A fused
// multiply-add is not among them: half_fma.hpp.)
template <class T, class Op>
T lanewise(T a, T b, Op op) {
  return T(op(double(float(a)), double(float(b))));
}

// CUDA's max and min of two: a NaN operand gives the other one, two NaN the
// canonical NaN (0x7FFF), and +0 counts as greater than -0.
template <class T, class Raw>
T max_or_min(T a, T b, bool max) {
  const float fa = float(a), fb = float(b);
  if (std::isnan(fa) && std::isnan(fb)) return T(Raw{0x7FFF});
  if (std::isnan(fa)) return b;
  if (std::isnan(fb)) return a;
  if (fa == fb) return ((Raw(a).x & 0x8000u) != 0) == max ? b : a;  // equal: only the zeros' signs can differ
  return (fa > fb) == max ? a : b;
}

// A sign flip or an absolute value touches the sign bit alone (no rounding, a NaN stays a NaN).
inline unsigned short negated(unsigned short bits) { return bits ^ 0x8000u; }
inline unsigned short absolute(unsigned short bits) { return bits & 0x7FFFu; }

}  // namespace warpnet::simt::pairs

// One set of functions per element type E and its pair P, CUDA's names.
#define WARPNET_PAIR_ARITHMETIC(E, P, RAW)                                                                         \
  inline E __hadd(E a, E b) { return warpnet::simt::pairs::lanewise(a, b, std::plus<>()); }                       \
  inline E __hsub(E a, E b) { return warpnet::simt::pairs::lanewise(a, b, std::minus<>()); }                      \
  inline E __hmul(E a, E b) { return warpnet::simt::pairs::lanewise(a, b, std::multiplies<>()); }                 \
  inline E __hdiv(E a, E b) { return warpnet::simt::pairs::lanewise(a, b, std::divides<>()); }                    \
  inline E __hneg(E a) { return E(RAW{warpnet::simt::pairs::negated(RAW(a).x)}); }                                \
  inline E __habs(E a) { return E(RAW{warpnet::simt::pairs::absolute(RAW(a).x)}); }                               \
  inline E __hmax(E a, E b) { return warpnet::simt::pairs::max_or_min<E, RAW>(a, b, true); }                      \
  inline E __hmin(E a, E b) { return warpnet::simt::pairs::max_or_min<E, RAW>(a, b, false); }                     \
  inline P __hadd2(P a, P b) { return P(__hadd(a.x, b.x), __hadd(a.y, b.y)); }                                    \
  inline P __hsub2(P a, P b) { return P(__hsub(a.x, b.x), __hsub(a.y, b.y)); }                                    \
  inline P __hmul2(P a, P b) { return P(__hmul(a.x, b.x), __hmul(a.y, b.y)); }                                    \
  inline P __h2div(P a, P b) { return P(__hdiv(a.x, b.x), __hdiv(a.y, b.y)); }                                    \
  inline P __hneg2(P a) { return P(__hneg(a.x), __hneg(a.y)); }                                                   \
  inline P __habs2(P a) { return P(__habs(a.x), __habs(a.y)); }                                                   \
  inline P __hmax2(P a, P b) { return P(__hmax(a.x, b.x), __hmax(a.y, b.y)); }                                    \
  inline P __hmin2(P a, P b) { return P(__hmin(a.x, b.x), __hmin(a.y, b.y)); }                                    \
  inline E operator+(E a, E b) { return __hadd(a, b); }                                                           \
  inline E operator-(E a, E b) { return __hsub(a, b); }                                                           \
  inline E operator*(E a, E b) { return __hmul(a, b); }                                                           \
  inline E operator/(E a, E b) { return __hdiv(a, b); }                                                           \
  inline E operator-(E a) { return __hneg(a); }                                                                   \
  inline E operator+(E a) { return a; }                                                                           \
  inline E& operator+=(E& a, E b) { return a = a + b; }                                                           \
  inline E& operator-=(E& a, E b) { return a = a - b; }                                                           \
  inline E& operator*=(E& a, E b) { return a = a * b; }                                                           \
  inline E& operator/=(E& a, E b) { return a = a / b; }                                                           \
  inline bool operator==(E a, E b) { return float(a) == float(b); }                                               \
  inline bool operator!=(E a, E b) { return float(a) != float(b); }                                               \
  inline bool operator<(E a, E b) { return float(a) < float(b); }                                                 \
  inline bool operator<=(E a, E b) { return float(a) <= float(b); }                                               \
  inline bool operator>(E a, E b) { return float(a) > float(b); }                                                 \
  inline bool operator>=(E a, E b) { return float(a) >= float(b); }                                               \
  inline P operator+(P a, P b) { return __hadd2(a, b); }                                                          \
  inline P operator-(P a, P b) { return __hsub2(a, b); }                                                          \
  inline P operator*(P a, P b) { return __hmul2(a, b); }                                                          \
  inline P operator/(P a, P b) { return __h2div(a, b); }                                                          \
  inline P operator-(P a) { return __hneg2(a); }                                                                  \
  inline P& operator+=(P& a, P b) { return a = a + b; }                                                           \
  inline P& operator-=(P& a, P b) { return a = a - b; }                                                           \
  inline P& operator*=(P& a, P b) { return a = a * b; }                                                           \
  inline P& operator/=(P& a, P b) { return a = a / b; }                                                           \
  inline bool operator==(P a, P b) { return float(a.x) == float(b.x) && float(a.y) == float(b.y); }               \
  inline bool operator!=(P a, P b) { return !(a == b); }                                                          \
  inline float __low2float(P a) { return float(a.x); }                                                            \
  inline float __high2float(P a) { return float(a.y); }
WARPNET_PAIR_ARITHMETIC(__half, __half2, __half_raw)
WARPNET_PAIR_ARITHMETIC(__nv_bfloat16, __nv_bfloat162, __nv_bfloat16_raw)
#undef WARPNET_PAIR_ARITHMETIC

// Making and taking apart pairs. The two-float ones round each lane once.
inline __half2 __floats2half2_rn(float low, float high) { return {__half(low), __half(high)}; }
inline __half2 __float2half2_rn(float f) { return {__half(f), __half(f)}; }
inline __half2 __float22half2_rn(float2 f) { return {__half(f.x), __half(f.y)}; }
inline float2 __half22float2(__half2 h) { return {float(h.x), float(h.y)}; }
inline __half2 __halves2half2(__half low, __half high) { return {low, high}; }
inline __half2 __half2half2(__half h) { return {h, h}; }
inline __half __low2half(__half2 h) { return h.x; }
inline __half __high2half(__half2 h) { return h.y; }
inline __half2 __lows2half2(__half2 a, __half2 b) { return {a.x, b.x}; }
inline __half2 __highs2half2(__half2 a, __half2 b) { return {a.y, b.y}; }
inline __half2 __lowhigh2highlow(__half2 h) { return {h.y, h.x}; }

inline __nv_bfloat162 __floats2bfloat162_rn(float low, float high) { return {__nv_bfloat16(low), __nv_bfloat16(high)}; }
inline __nv_bfloat162 __float2bfloat162_rn(float f) { return {__nv_bfloat16(f), __nv_bfloat16(f)}; }
inline __nv_bfloat162 __float22bfloat162_rn(float2 f) { return {__nv_bfloat16(f.x), __nv_bfloat16(f.y)}; }
inline float2 __bfloat1622float2(__nv_bfloat162 b) { return {float(b.x), float(b.y)}; }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 low, __nv_bfloat16 high) { return {low, high}; }
inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 b) { return {b, b}; }
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 b) { return b.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 b) { return b.y; }
inline __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return {a.x, b.x}; }
inline __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return {a.y, b.y}; }
inline __nv_bfloat162 __lowhigh2highlow(__nv_bfloat162 b) { return {b.y, b.x}; }
