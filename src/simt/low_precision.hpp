// half, bfloat16 and fp8 for kernels compiled by g++: CUDA's names, storage
// and rounding (round to nearest even; fp8 saturates to the largest finite
// value, as CUDA's constructors do), with only conversions, no arithmetic.
//
// Always warpnet's own, even with the toolkit installed: CUDA's cuda_fp16.h
// includes vector_functions.h, which includes cuda_runtime_api.h, whose
// extern "C" cudaMalloc & co. the emulator's runtime API would then redeclare
// (and collide with libcudart in a binary that links both, like `warpnet`).
#pragma once
#include "simt/minifloat.hpp"

// A 16-bit pattern with no arithmetic: how bits enter and leave the types.
struct __half_raw {
  unsigned short x;
};
struct __nv_bfloat16_raw {
  unsigned short x;
};

struct __half {
  __half() = default;
  __half(float f) : __x(static_cast<unsigned short>(warpnet::simt::encode(warpnet::simt::kHalf, f, false))) {}
  __half(__half_raw r) : __x(r.x) {}
  operator float() const { return warpnet::simt::decode(warpnet::simt::kHalf, __x); }
  operator __half_raw() const { return {__x}; }
  unsigned short __x;
};

struct __nv_bfloat16 {
  __nv_bfloat16() = default;
  __nv_bfloat16(float f)
      : __x(static_cast<unsigned short>(warpnet::simt::encode(warpnet::simt::kBfloat16, f, false))) {}
  __nv_bfloat16(__nv_bfloat16_raw r) : __x(r.x) {}
  operator float() const { return warpnet::simt::decode(warpnet::simt::kBfloat16, __x); }
  operator __nv_bfloat16_raw() const { return {__x}; }
  unsigned short __x;
};

inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline float __half2float(__half h) { return float(h); }
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 b) { return float(b); }

using __nv_fp8_storage_t = unsigned char;

// fp8 with 4 exponent bits (max 448, no inf) and with 5 (max 57344, IEEE-like).
struct __nv_fp8_e4m3 {
  __nv_fp8_e4m3() = default;
  explicit __nv_fp8_e4m3(float f) : __x(__nv_fp8_storage_t(warpnet::simt::encode(warpnet::simt::kE4M3, f, true))) {}
  explicit operator float() const { return warpnet::simt::decode(warpnet::simt::kE4M3, __x); }
  __nv_fp8_storage_t __x;
};
struct __nv_fp8_e5m2 {
  __nv_fp8_e5m2() = default;
  explicit __nv_fp8_e5m2(float f) : __x(__nv_fp8_storage_t(warpnet::simt::encode(warpnet::simt::kE5M2, f, true))) {}
  explicit operator float() const { return warpnet::simt::decode(warpnet::simt::kE5M2, __x); }
  __nv_fp8_storage_t __x;
};
