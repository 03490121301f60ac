// What the emulator's TMA tests share: a 2-D tensor map with the 128-byte
// swizzle, made through the driver entry point as kernels make theirs, and
// the 1024-byte-aligned start of a block's dynamic shared memory.
#pragma once
#include <doctest/doctest.h>

#include <cstdint>

#include "kernels/common/all.hpp"

// A 2-D tensor map of a row-major (outer, inner) matrix of `bytes`-byte
// elements with boxes of box_inner x box_outer, 128-byte swizzle.
inline CUresult encode(CUtensorMap* map, CUtensorMapDataType type, uint32_t bytes, const void* base, uint64_t inner,
                       uint64_t outer, uint32_t box_inner, uint32_t box_outer) {
  void* fn = nullptr;
  REQUIRE(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault) == cudaSuccess);
  const auto encode_tiled = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  const cuuint64_t dims[2] = {inner, outer}, strides[1] = {inner * bytes};
  const cuuint32_t box[2] = {box_inner, box_outer}, element_strides[2] = {1, 1};
  return encode_tiled(map, type, 2, const_cast<void*>(base), dims, strides, box, element_strides,
                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

// The 1024-byte-aligned start of the dynamic shared memory (the emulator's
// window is not aligned so: kernels align their swizzled tiles themselves).
__device__ inline unsigned char* aligned_shared() {
  unsigned char* raw = warpnet::dynamic_shared<unsigned char>();
  return raw + (1024 - warpnet::ptx::shared_address(raw) % 1024) % 1024;
}
