// cuTensorMapEncodeTiled for the emulator: the checks the CUDA driver API
// documents for tiled maps, then the fields kept in the map's opaque bytes.
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
CUresult refuse(const std::string& why) {
  refusal = cat("cuTensorMapEncodeTiled: ", why);
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult encode_tiled(CUtensorMap* tensor_map, CUtensorMapDataType type, cuuint32_t rank, void* global,
                      const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                      const cuuint32_t* element_strides, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                      CUtensorMapL2promotion, CUtensorMapFloatOOBfill oob_fill) {
  if (!tensor_map) return refuse("tensorMap is null");
  if (rank < 1 || rank > 5) return refuse(cat("tensorRank ", rank, " is outside [1, 5]"));
  if (reinterpret_cast<uintptr_t>(global) % 16 != 0) return refuse("globalAddress is not 16-byte aligned");
  if (type > CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ) return refuse(cat("tensorDataType ", int(type), " is unknown"));
  if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE)
    return refuse("interleaved layouts are not emulated (CU_TENSOR_MAP_INTERLEAVE_NONE only)");
  if (swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && swizzle != CU_TENSOR_MAP_SWIZZLE_128B)
    return refuse("the emulator models CU_TENSOR_MAP_SWIZZLE_NONE and _128B only");
  if (oob_fill != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    return refuse("only CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE (zeros outside the tensor) is emulated");
  TensorMapFields f{};
  f.magic = kTensorMapMagic;
  f.rank = rank;
  f.element_bytes = element_bytes(type);
  f.swizzle = swizzle;
  f.global = reinterpret_cast<uint64_t>(global);
  f.strides[0] = f.element_bytes;
  for (cuuint32_t d = 0; d < rank; ++d) {
    if (dims[d] == 0 || dims[d] > (uint64_t(1) << 32))
      return refuse(cat("globalDim[", d, "] = ", dims[d], " is outside [1, 2^32]"));
    if (box[d] == 0 || box[d] > 256) return refuse(cat("boxDim[", d, "] = ", box[d], " is outside [1, 256]"));
    if (element_strides[d] == 0 || element_strides[d] > 8)
      return refuse(cat("elementStrides[", d, "] = ", element_strides[d], " is outside [1, 8]"));
    f.dims[d] = dims[d];
    f.box[d] = box[d];
    f.element_strides[d] = d == 0 ? 1 : element_strides[d];  // without interleave the driver ignores dimension 0's
    if (d > 0) {
      // globalStrides has rank - 1 entries: the byte pitch of dimensions 1.. .
      if (strides[d - 1] % 16 != 0 || strides[d - 1] >= (uint64_t(1) << 40))
        return refuse(cat("globalStrides[", d - 1, "] = ", strides[d - 1], " is not a multiple of 16 below 2^40"));
      f.strides[d] = strides[d - 1];
    }
  }
  if ((uint64_t(box[0]) * f.element_bytes) % 16 != 0)
    return refuse(cat("boxDim[0] x element size = ", box[0] * f.element_bytes, " bytes is not a multiple of 16"));
  if (swizzle == CU_TENSOR_MAP_SWIZZLE_128B && box[0] * f.element_bytes != 128)
    return refuse(cat("the emulator models the 128-byte swizzle on inner boxes of exactly 128 bytes, not ",
                      box[0] * f.element_bytes, " (the driver allows up to 128)"));
  static_assert(sizeof(f) <= sizeof(tensor_map->opaque));
  std::memset(tensor_map->opaque, 0, sizeof(tensor_map->opaque));
  std::memcpy(tensor_map->opaque, &f, sizeof(f));
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
  const bool known = symbol && std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0;
  if (funcPtr) *funcPtr = known ? reinterpret_cast<void*>(&warpnet::simt::encode_tiled) : nullptr;
  if (driverStatus) *driverStatus = known ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
  return funcPtr ? cudaSuccess : cudaErrorInvalidValue;
}
