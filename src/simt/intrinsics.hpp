// CUDA's math and bit intrinsics for g++. The fast-math ones (__expf, ...)
// are approximations on the GPU (a few ulp); here they are the exact libm
// functions, so tests of them need the GPU's tolerance, not zero.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline float __powf(float x, float y) { return std::pow(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
// CUDA never contracts the _rn add and multiply into an FMA (that is what
// they are for); g++ with -march=native would, once they are inlined.
inline float __fadd_rn(float x, float y) { return __builtin_assoc_barrier(x + y); }
inline float __fmul_rn(float x, float y) { return __builtin_assoc_barrier(x * y); }
inline float __fmaf_rn(float x, float y, float z) { return std::fma(x, y, z); }
// Clamps to [+0, 1]; NaN gives +0, as PTX's .sat does.
inline float __saturatef(float x) { return !(x > 0.0f) ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }

inline int __float_as_int(float x) { return std::bit_cast<int>(x); }
inline unsigned __float_as_uint(float x) { return std::bit_cast<unsigned>(x); }
inline float __int_as_float(int x) { return std::bit_cast<float>(x); }
inline float __uint_as_float(unsigned x) { return std::bit_cast<float>(x); }
inline long long __double_as_longlong(double x) { return std::bit_cast<long long>(x); }
inline double __longlong_as_double(long long x) { return std::bit_cast<double>(x); }

inline int __popc(unsigned x) { return std::popcount(x); }
inline int __popcll(unsigned long long x) { return std::popcount(x); }
inline int __clz(int x) { return std::countl_zero(unsigned(x)); }
inline int __clzll(long long x) { return std::countl_zero((unsigned long long)x); }
// 1-based position of the least significant set bit, 0 for 0.
inline int __ffs(int x) { return x == 0 ? 0 : std::countr_zero(unsigned(x)) + 1; }
inline int __ffsll(long long x) { return x == 0 ? 0 : std::countr_zero((unsigned long long)x) + 1; }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
inline int __mul24(int x, int y) { return (x << 8 >> 8) * (y << 8 >> 8); }
inline unsigned __umul24(unsigned x, unsigned y) { return (x & 0xffffffu) * (y & 0xffffffu); }
inline int __mulhi(int x, int y) { return int((int64_t(x) * int64_t(y)) >> 32); }
inline unsigned __umulhi(unsigned x, unsigned y) { return unsigned((uint64_t(x) * uint64_t(y)) >> 32); }
inline long long __mul64hi(long long x, long long y) { return (long long)((__int128(x) * __int128(y)) >> 64); }
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return (unsigned long long)((unsigned __int128)x * y >> 64);
}
// Halving adds, without the intermediate overflow: (x + y) >> 1, rounded down
// or (r) up.
inline int __hadd(int x, int y) { return int((int64_t(x) + y) >> 1); }
inline int __rhadd(int x, int y) { return int((int64_t(x) + y + 1) >> 1); }
inline unsigned __uhadd(unsigned x, unsigned y) { return unsigned((uint64_t(x) + y) >> 1); }
inline unsigned __urhadd(unsigned x, unsigned y) { return unsigned((uint64_t(x) + y + 1) >> 1); }
// |x − y| + z.
inline unsigned __sad(int x, int y, unsigned z) { return unsigned(x > y ? int64_t(x) - y : int64_t(y) - x) + z; }
inline unsigned __usad(unsigned x, unsigned y, unsigned z) { return (x > y ? x - y : y - x) + z; }

// The funnel shifts: hi:lo as one 64-bit value shifted by `shift` mod 32
// (the c forms clamp it to 32 instead); l keeps the upper 32 bits, r the lower.
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
  return unsigned(((uint64_t(hi) << 32 | lo) << (shift & 31)) >> 32);
}
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned shift) {
  return unsigned(((uint64_t(hi) << 32 | lo) << (shift < 32 ? shift : 32)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  return unsigned((uint64_t(hi) << 32 | lo) >> (shift & 31));
}
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned shift) {
  return unsigned((uint64_t(hi) << 32 | lo) >> (shift < 32 ? shift : 32));
}
// Byte n of the result is byte ((s >> 4n) & 7) of y:x (x's bytes 0-3, y's 4-7).
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const uint64_t bytes = uint64_t(y) << 32 | x;
  unsigned r = 0;
  for (int n = 0; n < 4; ++n) r |= unsigned((bytes >> (8 * ((s >> (4 * n)) & 7u))) & 0xffu) << (8 * n);
  return r;
}
// Dot products of packed integers, accumulated in 32 bits (wrapping): dp4a,
// four 8-bit pairs; dp2a, a's two 16-bit halves with b's bytes 0-1 (lo) or
// 2-3 (hi). Signed for int, unsigned for unsigned.
inline int __dp4a(int a, int b, int c) {
  uint32_t r = uint32_t(c);
  for (int i = 0; i < 4; ++i) r += uint32_t(int(int8_t(a >> (8 * i))) * int(int8_t(b >> (8 * i))));
  return int(r);
}
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
  for (int i = 0; i < 4; ++i) c += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
  return c;
}
inline int __dp2a_lo(int a, int b, int c) {
  return int(uint32_t(c) + uint32_t(int(int16_t(a)) * int(int8_t(b))) +
             uint32_t(int(int16_t(a >> 16)) * int(int8_t(b >> 8))));
}
inline int __dp2a_hi(int a, int b, int c) {
  return int(uint32_t(c) + uint32_t(int(int16_t(a)) * int(int8_t(b >> 16))) +
             uint32_t(int(int16_t(a >> 16)) * int(int8_t(b >> 24))));
}
inline unsigned __dp2a_lo(unsigned a, unsigned b, unsigned c) {
  return c + (a & 0xffffu) * (b & 0xffu) + (a >> 16) * ((b >> 8) & 0xffu);
}
inline unsigned __dp2a_hi(unsigned a, unsigned b, unsigned c) {
  return c + (a & 0xffffu) * ((b >> 16) & 0xffu) + (a >> 16) * (b >> 24);
}

// CUDA's overloaded min/max device functions.
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
