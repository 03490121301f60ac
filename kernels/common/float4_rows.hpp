// 16-byte global loads and stores along the rows of a row-major matrix, with a
// 4-byte fallback where 16-byte ones are not allowed, and the vector accesses
// (float4, float2) every kernel uses so the tracer sees them whole. Used by
// the vectorized matmul versions (kernels/matmul/06_* and later) and others.
//
// A float4 access must be 16-byte aligned (a GPU faults otherwise). Element
// (r, c) of a rows x cols row-major matrix sits at base + (r*cols + c)*4 bytes,
// so every (r, c) with c % 4 == 0 is 16-byte aligned exactly when the base is
// and cols % 4 == 0 — then the four elements c..c+3 are also all inside the row
// or all past its end. `float4_rows` checks that once per launch; when it
// fails (odd widths, a pointer into the middle of a buffer) the helpers fall
// back to four guarded 4-byte accesses, the same bytes in four instructions.
#pragma once
#include "kernels/common/cuda_compat.hpp"

namespace warpnet {
inline namespace WARPNET_KERNEL_COPY {

// One 16-byte load (store) at a 16-byte-aligned address, global or shared.
// nvcc: the plain float4 dereference, one ld.v4 (st.v4). g++: GCC's scalar
// replacement of aggregates splits `float4 v = *p` into four 4-byte loads when
// only v's fields are used (and a float4 stored from four scalars into four
// stores) before the tracer's instrumentation runs, so the trace would count
// four requests where a GPU issues one; a 16-byte memcpy stays one access.
// The memcpy would take any address, so the emulator checks the alignment a
// GPU's ld.v4 (st.v4) requires and stops the launch as the GPU would.
__device__ __forceinline__ float4 load_float4(const float* p) {
#if defined(__CUDACC__)
  return *reinterpret_cast<const float4*>(p);
#else
  if (reinterpret_cast<uintptr_t>(p) % 16 != 0) ::warpnet::simt::misaligned_access("load_float4 (ld.v4)", p, 16);
  float4 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
#endif
}
__device__ __forceinline__ void store_float4(float* p, float4 v) {
#if defined(__CUDACC__)
  *reinterpret_cast<float4*>(p) = v;
#else
  if (reinterpret_cast<uintptr_t>(p) % 16 != 0) ::warpnet::simt::misaligned_access("store_float4 (st.v4)", p, 16);
  __builtin_memcpy(p, &v, sizeof v);
#endif
}

// Two adjacent floats in one 8-byte load (p 8-byte aligned): ld.v2 on a GPU,
// one access in the trace (the memcpy, as load_float4's).
__device__ __forceinline__ float2 load_float2(const float* p) {
#if defined(__CUDACC__)
  return *reinterpret_cast<const float2*>(p);
#else
  if (reinterpret_cast<uintptr_t>(p) % 8 != 0) ::warpnet::simt::misaligned_access("load_float2 (ld.v2)", p, 8);
  float2 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
#endif
}

// Two adjacent floats in one 8-byte store (p 8-byte aligned): st.v2 on a GPU.
// Under g++ a float2 built from two scalars is stored as two 4-byte stores
// before the tracer sees it; an 8-byte memcpy stays one access.
__device__ __forceinline__ void store_float2(float* p, float x, float y) {
#if defined(__CUDACC__)
  *reinterpret_cast<float2*>(p) = make_float2(x, y);
#else
  if (reinterpret_cast<uintptr_t>(p) % 8 != 0) ::warpnet::simt::misaligned_access("store_float2 (st.v2)", p, 8);
  const float2 v = make_float2(x, y);
  __builtin_memcpy(p, &v, sizeof v);
#endif
}

// Whether `p` may be read or written by 16-byte accesses.
__host__ __device__ __forceinline__ bool aligned16(const void* p) { return reinterpret_cast<size_t>(p) % 16 == 0; }

// Whether 16-byte accesses at (r, c), c % 4 == 0, of a matrix with `cols`
// columns stored at `base` are aligned (see above).
__host__ __device__ __forceinline__ bool float4_rows(const void* base, int cols) {
  return cols % 4 == 0 && aligned16(base);
}

// Whether 8-byte accesses at (r, c), c even, of a matrix with `cols` columns
// stored at `base` are aligned: the pairs store_float2 writes.
__host__ __device__ __forceinline__ bool float2_rows(const void* base, int cols) {
  return cols % 2 == 0 && reinterpret_cast<size_t>(base) % 8 == 0;
}

// Elements (r, c..c+3) of a rows x cols row-major matrix, zeros past its
// edges. c % 4 == 0. `vector`: float4_rows(m, cols) held.
__device__ __forceinline__ float4 load_row4(const float* m, int rows, int cols, int r, int c, bool vector) {
  if (r >= rows) return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (vector) return c < cols ? load_float4(m + size_t(r) * cols + c) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  const float* p = m + size_t(r) * cols;
  return make_float4(c + 0 < cols ? p[c + 0] : 0.0f, c + 1 < cols ? p[c + 1] : 0.0f,
                     c + 2 < cols ? p[c + 2] : 0.0f, c + 3 < cols ? p[c + 3] : 0.0f);
}

// Writes the elements of v that fall inside a rows x cols row-major matrix to
// (r, c..c+3). c % 4 == 0. `vector`: float4_rows(m, cols) held.
__device__ __forceinline__ void store_row4(float* m, int rows, int cols, int r, int c, float4 v, bool vector) {
  if (r >= rows || c >= cols) return;
  float* p = m + size_t(r) * cols + c;
  if (vector) {
    store_float4(p, v);
    return;
  }
  p[0] = v.x;
  if (c + 1 < cols) p[1] = v.y;
  if (c + 2 < cols) p[2] = v.z;
  if (c + 3 < cols) p[3] = v.w;
}

}  // namespace WARPNET_KERNEL_COPY
}  // namespace warpnet
