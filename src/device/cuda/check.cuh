// Checking CUDA and cuBLAS calls in the nvcc-compiled GPU runtime (runtime.cu,
// matmul_cublas.cu). Every call goes through one of these; a failure throws
// gpu::Failure with the call as written, the error's name and its text.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "device/cuda/gpu.hpp"

namespace warpnet::device::gpu {

// Errors after which the CUDA context is unusable for the rest of the process
// (the runtime's documentation: "the process must be terminated and relaunched").
inline bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* call, const std::string& where) {
  throw Failure(cat(where.empty() ? "" : where + ": ", call, " failed: ", cudaGetErrorName(e), ": ",
                    cudaGetErrorString(e)),
                is_sticky(e));
}

const char* cublas_status_name(cublasStatus_t s);

// The process's cuBLAS handle, created on first use (default math mode: no
// TF32 for SGEMM unless NVIDIA_TF32_OVERRIDE says so; bench records it),
// bound at each call to the thread's launch_stream() (cuda_compat.hpp).
cublasHandle_t cublas_handle();

}  // namespace warpnet::device::gpu

// WN_CUDA(call, where): `where` names what was being done ("matmul/03_smem_tiled at M=...").
#define WN_CUDA(call, where)                                                           \
  do {                                                                                 \
    const cudaError_t wn_cuda_error_ = (call);                                         \
    if (wn_cuda_error_ != cudaSuccess) ::warpnet::device::gpu::throw_cuda(wn_cuda_error_, #call, (where)); \
  } while (0)

#define WN_CUBLAS(call, where)                                                                      \
  do {                                                                                              \
    const cublasStatus_t wn_cublas_status_ = (call);                                                \
    if (wn_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                                 \
      throw ::warpnet::device::gpu::Failure(                                                        \
          ::warpnet::cat(std::string(where).empty() ? "" : std::string(where) + ": ", #call, " failed: ", \
                         ::warpnet::device::gpu::cublas_status_name(wn_cublas_status_)),            \
          wn_cublas_status_ == CUBLAS_STATUS_EXECUTION_FAILED);                                     \
  } while (0)
