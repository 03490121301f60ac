// cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col for the emulator: the
// checks the CUDA driver API documents, then the fields kept in the map's
// opaque bytes.
#include "simt/tensor_map.hpp"

#include <cstring>
#include <string>

#include "core/error.hpp"

namespace warpnet::simt {
namespace {

uint32_t element_bytes(CUtensorMapDataType type) {
  switch (type) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
    default: return 4;
  }
}

thread_local std::string refusal;

// The driver returns CUDA_ERROR_INVALID_VALUE and says nothing more; the
// emulator keeps why (last_tensor_map_refusal), outside the runtime's error
// state, which a driver call does not touch.
CUresult refuse(const char* encoder, const std::string& why) {
  refusal = cat(encoder, ": ", why);
  return CUDA_ERROR_INVALID_VALUE;
}

// What both encoders check and keep: the tensor (rank, type, address, sizes,
// pitches), the element strides, the swizzle and the fill. `inner` is the
// elements a copy reads along dimension 0 (the box's, or the channels per
// pixel). Empty when all is well, else why not.
std::string check_tensor(TensorMapFields& f, CUtensorMapDataType type, cuuint32_t rank, void* global,
                         const cuuint64_t* dims, const cuuint64_t* strides, cuuint32_t inner,
                         const cuuint32_t* element_strides, CUtensorMapInterleave interleave,
                         CUtensorMapSwizzle swizzle, CUtensorMapFloatOOBfill oob_fill) {
  if (reinterpret_cast<uintptr_t>(global) % 16 != 0) return "globalAddress is not 16-byte aligned";
  if (type > CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ) return cat("tensorDataType ", int(type), " is unknown");
  if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE)
    return "interleaved layouts are not emulated (CU_TENSOR_MAP_INTERLEAVE_NONE only)";
  if (swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && swizzle != CU_TENSOR_MAP_SWIZZLE_128B)
    return "the emulator models CU_TENSOR_MAP_SWIZZLE_NONE and _128B only";
  if (oob_fill != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    return "only CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE (zeros outside the tensor) is emulated";
  f.magic = kTensorMapMagic;
  f.rank = uint8_t(rank);
  f.element_bytes = uint8_t(element_bytes(type));
  f.swizzle = uint8_t(swizzle);
  f.global = reinterpret_cast<uint64_t>(global);
  f.strides[0] = f.element_bytes;
  for (cuuint32_t d = 0; d < rank; ++d) {
    if (dims[d] == 0 || dims[d] > (uint64_t(1) << 32))
      return cat("globalDim[", d, "] = ", dims[d], " is outside [1, 2^32]");
    if (element_strides[d] == 0 || element_strides[d] > 8)
      return cat("elementStrides[", d, "] = ", element_strides[d], " is outside [1, 8]");
    f.dims[d] = dims[d];
    f.element_strides[d] = uint8_t(d == 0 ? 1 : element_strides[d]);  // without interleave the driver ignores dimension 0's
    if (d > 0) {
      // globalStrides has rank - 1 entries: the byte pitch of dimensions 1.. .
      if (strides[d - 1] % 16 != 0 || strides[d - 1] >= (uint64_t(1) << 40))
        return cat("globalStrides[", d - 1, "] = ", strides[d - 1], " is not a multiple of 16 below 2^40");
      f.strides[d] = strides[d - 1];
    }
  }
  const uint64_t inner_bytes = uint64_t(inner) * f.element_bytes;
  if (inner_bytes % 16 != 0) return cat("the inner extent x element size = ", inner_bytes, " bytes is not a multiple of 16");
  if (swizzle == CU_TENSOR_MAP_SWIZZLE_128B && inner_bytes != 128)
    return cat("the emulator models the 128-byte swizzle on inner extents of exactly 128 bytes, not ", inner_bytes,
               " (the driver allows up to 128)");
  return {};
}

void store(CUtensorMap* tensor_map, const TensorMapFields& f) {
  static_assert(sizeof(f) <= sizeof(tensor_map->opaque));
  std::memset(tensor_map->opaque, 0, sizeof(tensor_map->opaque));
  std::memcpy(tensor_map->opaque, &f, sizeof(f));
}

CUresult encode_tiled(CUtensorMap* tensor_map, CUtensorMapDataType type, cuuint32_t rank, void* global,
                      const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                      const cuuint32_t* element_strides, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                      CUtensorMapL2promotion, CUtensorMapFloatOOBfill oob_fill) {
  constexpr const char* encoder = "cuTensorMapEncodeTiled";
  if (!tensor_map) return refuse(encoder, "tensorMap is null");
  if (rank < 1 || rank > 5) return refuse(encoder, cat("tensorRank ", rank, " is outside [1, 5]"));
  TensorMapFields f{};
  for (cuuint32_t d = 0; d < rank; ++d) {
    if (box[d] == 0 || box[d] > 256) return refuse(encoder, cat("boxDim[", d, "] = ", box[d], " is outside [1, 256]"));
    f.box[d] = uint16_t(box[d]);
  }
  const std::string why = check_tensor(f, type, rank, global, dims, strides, box[0], element_strides, interleave,
                                       swizzle, oob_fill);
  if (!why.empty()) return refuse(encoder, why);
  store(tensor_map, f);
  return CUDA_SUCCESS;
}

// im2col: the corners' range shrinks with the rank (their bits are shared):
// 3-D [-2^15, 2^15 - 1], 4-D [-2^7, 2^7 - 1], 5-D [-2^4, 2^4 - 1].
CUresult encode_im2col(CUtensorMap* tensor_map, CUtensorMapDataType type, cuuint32_t rank, void* global,
                       const cuuint64_t* dims, const cuuint64_t* strides, const int* lower, const int* upper,
                       cuuint32_t channels_per_pixel, cuuint32_t pixels_per_column, const cuuint32_t* element_strides,
                       CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion,
                       CUtensorMapFloatOOBfill oob_fill) {
  constexpr const char* encoder = "cuTensorMapEncodeIm2col";
  if (!tensor_map) return refuse(encoder, "tensorMap is null");
  if (rank < 3 || rank > 5) return refuse(encoder, cat("tensorRank ", rank, " is outside [3, 5]"));
  if (channels_per_pixel == 0 || channels_per_pixel > 256)
    return refuse(encoder, cat("channelsPerPixel ", channels_per_pixel, " is outside [1, 256]"));
  if (pixels_per_column == 0 || pixels_per_column > 1024)
    return refuse(encoder, cat("pixelsPerColumn ", pixels_per_column, " is outside [1, 1024]"));
  TensorMapFields f{};
  const std::string why = check_tensor(f, type, rank, global, dims, strides, channels_per_pixel, element_strides,
                                       interleave, swizzle, oob_fill);
  if (!why.empty()) return refuse(encoder, why);
  if (element_strides[rank - 1] != 1)
    return refuse(encoder, cat("elementStrides[", rank - 1, "] = ", element_strides[rank - 1],
                               ": the emulator walks the images one by one (1 only)"));
  const int limit = rank == 3 ? 1 << 15 : rank == 4 ? 1 << 7 : 1 << 4;
  for (cuuint32_t d = 1; d + 1 < rank; ++d) {
    const int lo = lower[d - 1], up = upper[d - 1];
    if (lo < -limit || lo >= limit || up < -limit || up >= limit)
      return refuse(encoder, cat("pixelBoxLowerCorner[", d - 1, "] = ", lo, " or pixelBoxUpperCorner[", d - 1, "] = ",
                                 up, " is outside [", -limit, ", ", limit - 1, "] (rank ", rank, ")"));
    if (int64_t(lo) >= int64_t(dims[d]) + up)
      return refuse(encoder, cat("the bounding box [", lo, ", ", int64_t(dims[d]) + up, ") of dimension ", d,
                                 " is empty"));
    f.lower[d - 1] = int16_t(lo);
    f.upper[d - 1] = int16_t(up);
  }
  f.im2col = true;
  f.box[0] = uint16_t(channels_per_pixel);
  f.box[1] = uint16_t(pixels_per_column);
  store(tensor_map, f);
  return CUDA_SUCCESS;
}

}  // namespace

std::optional<TensorMapFields> tensor_map_fields(const CUtensorMap& map) {
  TensorMapFields f;
  std::memcpy(&f, map.opaque, sizeof(f));
  if (f.magic != kTensorMapMagic) return std::nullopt;
  return f;
}

const std::string& last_tensor_map_refusal() { return refusal; }

}  // namespace warpnet::simt

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr, unsigned int, unsigned long long,
                                             cudaDriverEntryPointQueryResult* driverStatus) {
  void* entry = nullptr;
  if (symbol && std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0)
    entry = reinterpret_cast<void*>(&warpnet::simt::encode_tiled);
  else if (symbol && std::strcmp(symbol, "cuTensorMapEncodeIm2col") == 0)
    entry = reinterpret_cast<void*>(&warpnet::simt::encode_im2col);
  if (funcPtr) *funcPtr = entry;
  if (driverStatus) *driverStatus = entry ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
  return funcPtr ? cudaSuccess : cudaErrorInvalidValue;
}
