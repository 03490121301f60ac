// Tensor-core and async-copy PTX wrappers on both compilers: inline PTX under
// nvcc (sm_80+), the emulator's versions (src/simt/ptx.hpp) under g++, with
// the same lane-to-element layouts (PTX ISA, "Matrix Fragments for
// mma.m16n8k16", "ldmatrix", "cp.async"; summarized in src/simt/tensor_cores.hpp).
//
//   mma_m16n8k16_f16_f32 / _bf16_f32   d (16,8) = a (16,16) @ b (16,8) + c
//   mma_m16n8k32_e4m3_f32              d (16,8) = a (16,32) @ b (32,8) + c, fp8 (sm_89+)
//   ldmatrix_m8n8<N, Trans>            N = 1, 2, 4 8x8 b16 matrices from shared memory
//   cp_async_ca<4|8|16>, cp_async_cg   global -> shared copies, zero-fill past src_bytes
//   cp_async_commit, cp_async_wait<N>, cp_async_wait_all
#pragma once
#include <cstdint>

#include "kernels/common/cuda_compat.hpp"

#if !defined(__CUDACC__)
#include "simt/ptx.hpp"
#else
namespace warpnet::ptx {

// a: a0..a7 in 4 registers (two 16-bit elements each, lower index low), b: b0..b3 in 2, c/d: 4 floats.
__device__ __forceinline__ void mma_m16n8k16_f16_f32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                                     const float (&c)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
__device__ __forceinline__ void mma_m16n8k16_bf16_f32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                                      const float (&c)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

// fp8 e4m3 inputs, sm_89+: a: a0..a15 in 4 registers, b: b0..b7 in 2 (four 8-bit elements each,
// lowest index in the lowest byte), c/d: 4 floats. Device code for sm_80 gets a trap instead.
__device__ __forceinline__ void mma_m16n8k32_e4m3_f32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                                      const float (&c)[4]) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
#else
  asm volatile("trap;");
  d[0] = c[0], d[1] = c[1], d[2] = c[2], d[3] = c[3];
#endif
}

// Lanes 0..8N-1 give one 16-byte-aligned row address each (matrix lane/8, row lane%8).
template <int N, bool Trans = false>
__device__ __forceinline__ void ldmatrix_m8n8(uint32_t (&r)[N], const void* row_address) {
  static_assert(N == 1 || N == 2 || N == 4, "ldmatrix loads 1, 2 or 4 matrices");
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(row_address));
  if constexpr (N == 1 && !Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(s));
  else if constexpr (N == 1)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(s));
  else if constexpr (N == 2 && !Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(s));
  else if constexpr (N == 2)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(s));
  else if constexpr (!Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(s));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(s));
}

// src_bytes < Bytes: read that many, zero-fill the rest (the src-size operand).
template <int Bytes>
__device__ __forceinline__ void cp_async_ca(void* shared_dst, const void* global_src, unsigned src_bytes = Bytes) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async.ca copies 4, 8 or 16 bytes");
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(global_src), "n"(Bytes), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_cg(void* shared_dst, const void* global_src, unsigned src_bytes = 16) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(global_src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

}  // namespace warpnet::ptx
#endif
