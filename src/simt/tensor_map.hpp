// TMA tensor maps for the emulator: the driver-API types a Hopper kernel's host
// code names (CUtensorMap, cuTensorMapEncodeTiled through
// cudaGetDriverEntryPointByVersion), with the values of CUDA's cuda.h and
// cudaTypedefs.h, so that code compiles unchanged under g++. The encoder
// checks what the driver documents it checks and keeps the fields in the
// map's 128 opaque bytes; the emulator's TMA copy (hopper.cpp) reads them back.
// Two kinds of map: tiled (cuTensorMapEncodeTiled: boxes) and im2col
// (cuTensorMapEncodeIm2col: runs of pixels of an N...C image, for convolutions).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "simt/cuda_runtime.hpp"

using cuuint32_t = uint32_t;
using cuuint64_t = uint64_t;

enum CUresult { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1 };

// 128 bytes, 64-byte aligned, as in cuda.h; kernels take it as a __grid_constant__ parameter.
struct alignas(64) CUtensorMap {
  cuuint64_t opaque[16];
};

enum CUtensorMapDataType {
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  CU_TENSOR_MAP_DATA_TYPE_UINT16,
  CU_TENSOR_MAP_DATA_TYPE_UINT32,
  CU_TENSOR_MAP_DATA_TYPE_INT32,
  CU_TENSOR_MAP_DATA_TYPE_UINT64,
  CU_TENSOR_MAP_DATA_TYPE_INT64,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ,
  CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
  CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ,
};
enum CUtensorMapInterleave {
  CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
  CU_TENSOR_MAP_INTERLEAVE_16B,
  CU_TENSOR_MAP_INTERLEAVE_32B,
};
enum CUtensorMapSwizzle {
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_32B,
  CU_TENSOR_MAP_SWIZZLE_64B,
  CU_TENSOR_MAP_SWIZZLE_128B,
};
enum CUtensorMapL2promotion {
  CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
  CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
  CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
  CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
};
enum CUtensorMapFloatOOBfill {
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
};

using PFN_cuTensorMapEncodeTiled_v12000 = CUresult (*)(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType,
                                                       cuuint32_t tensorRank, void* globalAddress,
                                                       const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
                                                       const cuuint32_t* boxDim, const cuuint32_t* elementStrides,
                                                       CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                                       CUtensorMapL2promotion l2Promotion,
                                                       CUtensorMapFloatOOBfill oobFill);

// im2col mode: instead of a box, pixelsPerColumn pixels of an image tensor
// {C, W, (H, (D,)) N}, channelsPerPixel channels each, walked through a
// bounding box (pixelBoxLowerCorner/UpperCorner: rank - 2 values each).
using PFN_cuTensorMapEncodeIm2col_v12000 = CUresult (*)(
    CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank, void* globalAddress,
    const cuuint64_t* globalDim, const cuuint64_t* globalStrides, const int* pixelBoxLowerCorner,
    const int* pixelBoxUpperCorner, cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn,
    const cuuint32_t* elementStrides, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill);

enum cudaDriverEntryPointQueryResult {
  cudaDriverEntryPointSuccess = 0,
  cudaDriverEntryPointSymbolNotFound = 1,
  cudaDriverEntryPointVersionNotSufficent = 2,
};
enum : unsigned long long { cudaEnableDefault = 0 };

// The emulator's driver offers two entry points: "cuTensorMapEncodeTiled" and "cuTensorMapEncodeIm2col".
cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags,
                                             cudaDriverEntryPointQueryResult* driverStatus = nullptr);

namespace warpnet::simt {

// What an encoded map holds, read back by the TMA copy. Only what the copy
// needs: no interleave (the encoder refuses it). Small fields are bytes so
// that the whole fits the map's 128.
struct TensorMapFields {
  uint32_t magic;  // kTensorMapMagic once encoded: a zeroed or foreign map is refused
  uint8_t rank;
  uint8_t element_bytes;
  uint8_t swizzle;  // CUtensorMapSwizzle
  bool im2col;      // encoded by cuTensorMapEncodeIm2col
  uint64_t global;  // address
  uint64_t dims[5];
  uint64_t strides[5];  // bytes; strides[0] is element_bytes
  // Tiled: the box, at most 256 each. Im2col: box[0] is channelsPerPixel
  // (at most 256), box[1] pixelsPerColumn (at most 1024), the rest unused.
  uint16_t box[5];
  // The traversal step along each dimension (elementStrides): a box walks
  // ceil(box[d] / element_strides[d]) elements of dimension d, each that
  // many apart, and lays them side by side in shared memory. Dimension 0's
  // is 1: the driver ignores it without interleave.
  uint8_t element_strides[5];  // at most 8 each
  // Im2col: the bounding box the pixels are walked through, per spatial
  // dimension d = 1..rank-2 (index d - 1): positions [lower, dims[d] + upper),
  // every element_strides[d]-th from the copy's start; past its end the walk
  // goes back to lower and one step on in the next dimension, and past the
  // last spatial one, to the next image. A copy's offsets (the filter tap)
  // move every pixel it reads, not the walk.
  int16_t lower[3], upper[3];
};
// Elements a box holds along dimension d: ceil(box / stride).
inline uint32_t box_elements(const TensorMapFields& f, uint32_t d) {
  return (f.box[d] + f.element_strides[d] - 1) / f.element_strides[d];
}
static_assert(sizeof(TensorMapFields) <= sizeof(CUtensorMap));
inline constexpr uint32_t kTensorMapMagic = 0x544d4150;  // "TMAP"

// The fields of an encoded map; none for a map neither encoder ever encoded.
std::optional<TensorMapFields> tensor_map_fields(const CUtensorMap& map);
// Why this host thread's last cuTensorMapEncodeTiled or cuTensorMapEncodeIm2col returned CUDA_ERROR_INVALID_VALUE.
const std::string& last_tensor_map_refusal();

}  // namespace warpnet::simt
