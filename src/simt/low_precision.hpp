// half, bfloat16 and fp8 for kernels compiled by g++, with CUDA's names,
// storage and rounding (round to nearest even; fp8 saturates to the largest
// finite value, as CUDA's constructors do).
//
// With the toolkit (WARPNET_SIMT_CUDA_HEADERS, set by src/simt/CMakeLists.txt):
// CUDA's own cuda_fp16.h, cuda_bf16.h, cuda_fp8.h, all host-capable. They
// reach CUDA's runtime API through vector_functions.h -> cuda_runtime_api.h,
// whose extern "C" cudaMalloc & co. would clash in this translation unit with
// the emulator's (cuda_runtime.hpp, C++ linkage, other types). Both headers'
// include guards are defined first, so neither is read: the make_float2 & co.
// they would give come from cuda_types.hpp, and the runtime API stays the
// emulator's. (At link time there is no clash to fix: the emulator's functions
// have C++ linkage, libcudart's C linkage — different symbols, so `warpnet`
// links both and its GPU probe calls the real runtime.)
// Without the toolkit: warpnet's own types below, and their pairs and
// arithmetic (half_pairs.hpp). Either way, the fused multiply-adds, which
// CUDA's headers offer the device alone, come from half_fma.hpp.
#pragma once
#include "simt/cuda_types.hpp"

#if WARPNET_SIMT_CUDA_HEADERS
#ifndef __VECTOR_FUNCTIONS_H__
#define __VECTOR_FUNCTIONS_H__
#endif
#ifndef __CUDA_RUNTIME_API_H__
#define __CUDA_RUNTIME_API_H__
#endif
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#else
#include <concepts>

#include "simt/minifloat.hpp"

// A 16-bit pattern with no arithmetic: how bits enter and leave the types.
struct __half_raw {
  unsigned short x;
};
struct __nv_bfloat16_raw {
  unsigned short x;
};

// Like CUDA's types, each converts from float, from double (rounded once,
// not through float) and from an integer: half and bf16 round it once
// (exactly so up to 2^53), fp8 through float, as cuda_fp8.hpp does. One
// difference: a NaN double becomes the float path's NaN (sign clear, 0x7F
// in fp8), where CUDA's double-to-fp8 conversion keeps the sign and gives
// e5m2 0x7E; both are NaN codes.
struct __half {
  __half() = default;
  __half(float f) : __half(double(f)) {}
  __half(double d) : __x(static_cast<unsigned short>(warpnet::simt::encode(warpnet::simt::kHalf, d, false))) {}
  __half(std::integral auto i) : __half(double(i)) {}
  __half(__half_raw r) : __x(r.x) {}
  operator float() const { return warpnet::simt::decode(warpnet::simt::kHalf, __x); }
  operator __half_raw() const { return {__x}; }
  unsigned short __x;
};

struct __nv_bfloat16 {
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) : __nv_bfloat16(double(f)) {}
  __nv_bfloat16(double d)
      : __x(static_cast<unsigned short>(warpnet::simt::encode(warpnet::simt::kBfloat16, d, false))) {}
  __nv_bfloat16(std::integral auto i) : __nv_bfloat16(double(i)) {}
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
  explicit __nv_fp8_e4m3(float f) : __nv_fp8_e4m3(double(f)) {}
  explicit __nv_fp8_e4m3(double d) : __x(__nv_fp8_storage_t(warpnet::simt::encode(warpnet::simt::kE4M3, d, true))) {}
  explicit __nv_fp8_e4m3(std::integral auto i) : __nv_fp8_e4m3(float(i)) {}
  explicit operator float() const { return warpnet::simt::decode(warpnet::simt::kE4M3, __x); }
  __nv_fp8_storage_t __x;
};
struct __nv_fp8_e5m2 {
  __nv_fp8_e5m2() = default;
  explicit __nv_fp8_e5m2(float f) : __nv_fp8_e5m2(double(f)) {}
  explicit __nv_fp8_e5m2(double d) : __x(__nv_fp8_storage_t(warpnet::simt::encode(warpnet::simt::kE5M2, d, true))) {}
  explicit __nv_fp8_e5m2(std::integral auto i) : __nv_fp8_e5m2(float(i)) {}
  explicit operator float() const { return warpnet::simt::decode(warpnet::simt::kE5M2, __x); }
  __nv_fp8_storage_t __x;
};

#include "simt/half_pairs.hpp"  // __half2, __nv_bfloat162 and the arithmetic
#endif  // WARPNET_SIMT_CUDA_HEADERS

#include "simt/half_fma.hpp"  // __hfma, __hfma2: device-only in CUDA's headers
