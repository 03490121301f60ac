// CUDA's built-in vector types (dim3, uint3, float4, int4, ...) for g++.
// Layout and alignment match CUDA's vector_types.h, so a float4 load in a
// kernel is one 16-byte access here as on the GPU (the tracer counts it so).
#pragma once
#include <cstddef>

#if WARPNET_SIMT_CUDA_HEADERS
// The toolkit is installed: its own vector_types.h (plain structs, host-capable),
// which CUDA's cuda_fp16.h & co. (low_precision.hpp) build on.
#include <vector_types.h>
#else
struct uint3 {
  unsigned int x, y, z;
};

struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return {x, y, z}; }
};

// WARPNET_VECTOR_TYPES(name, scalar, align2, align4): name1..name4 with CUDA's
// alignment (name3 is never over-aligned).
#define WARPNET_VECTOR_TYPES(T, S, A2, A4) \
  struct T##1 { S x; };                    \
  struct alignas(A2) T##2 { S x, y; };     \
  struct T##3 { S x, y, z; };              \
  struct alignas(A4) T##4 { S x, y, z, w; };
WARPNET_VECTOR_TYPES(char, signed char, 2, 4)
WARPNET_VECTOR_TYPES(uchar, unsigned char, 2, 4)
WARPNET_VECTOR_TYPES(short, short, 4, 8)
WARPNET_VECTOR_TYPES(ushort, unsigned short, 4, 8)
WARPNET_VECTOR_TYPES(int, int, 8, 16)
WARPNET_VECTOR_TYPES(float, float, 8, 16)
WARPNET_VECTOR_TYPES(longlong, long long, 16, 16)
WARPNET_VECTOR_TYPES(ulonglong, unsigned long long, 16, 16)
WARPNET_VECTOR_TYPES(double, double, 16, 16)
#undef WARPNET_VECTOR_TYPES
// uint3 is declared above (threadIdx's type); the rest of the uint family here.
struct uint1 { unsigned int x; };
struct alignas(8) uint2 { unsigned int x, y; };
struct alignas(16) uint4 { unsigned int x, y, z, w; };
#endif

// make_nameN helpers, as CUDA's vector_functions.h has them (that header is
// never included here: it pulls in CUDA's runtime API, see low_precision.hpp).
// CUDA 13 deprecates double4, longlong4, ulonglong4 (for _16a/_32a variants); a
// kernel that uses them is warned, this definition is not.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#define WARPNET_VECTOR_MAKERS(T, S)                                                             \
  constexpr T##1 make_##T##1(S x) { return {x}; }                                               \
  constexpr T##2 make_##T##2(S x, S y) { return {x, y}; }                                       \
  constexpr T##3 make_##T##3(S x, S y, S z) { return {x, y, z}; }                               \
  constexpr T##4 make_##T##4(S x, S y, S z, S w) { return {x, y, z, w}; }
WARPNET_VECTOR_MAKERS(char, signed char)
WARPNET_VECTOR_MAKERS(uchar, unsigned char)
WARPNET_VECTOR_MAKERS(short, short)
WARPNET_VECTOR_MAKERS(ushort, unsigned short)
WARPNET_VECTOR_MAKERS(int, int)
WARPNET_VECTOR_MAKERS(uint, unsigned int)
WARPNET_VECTOR_MAKERS(float, float)
WARPNET_VECTOR_MAKERS(longlong, long long)
WARPNET_VECTOR_MAKERS(ulonglong, unsigned long long)
WARPNET_VECTOR_MAKERS(double, double)
#undef WARPNET_VECTOR_MAKERS
#pragma GCC diagnostic pop

static_assert(sizeof(float4) == 16 && alignof(float4) == 16);
static_assert(sizeof(float2) == 8 && alignof(float2) == 8);
static_assert(sizeof(float3) == 12 && alignof(float3) == 4);
static_assert(sizeof(double2) == 16 && alignof(double2) == 16);
