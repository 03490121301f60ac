// Checking CUDA and cuBLAS calls in the nvcc-compiled GPU runtime (runtime.cu,
// matmul_cublas.cu, conv_cudnn.cu) and waiting for kernels with a time limit
// (also the autotuners', gpu_timing.hpp). Every call goes through one of
// these; a failure throws gpu::Failure with the call as written, the error's
// name and its text.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "device/cuda/gpu.hpp"
#include "kernels/common/cuda_compat.hpp"  // launch_stream(), cuda_failure()

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
  throw Failure(cuda_failure(e, where.empty() ? std::string(call) : where + ": " + call), is_sticky(e));
}

// Waits for `event`, polling instead of cudaEventSynchronize so that a kernel
// that never ends (a bad loop bound, a barrier some threads never reach) is
// reported as hung after `timeout_s` rather than stopping the whole process:
// a Failure with the context lost (the kernel still runs; nothing after it
// can). The bench's runs and the autotuners' timing launches wait here.
inline void wait_for(cudaEvent_t event, double timeout_s, const std::string& where) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = cudaEventQuery(event);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) throw_cuda(e, "the kernel (seen by cudaEventQuery)", where);
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeout_s)
      throw Failure(cat(where, ": still running after ", timeout_s,
                        " s, treated as hung; no further CUDA work can run in this process"),
                    true);
    std::this_thread::sleep_for(std::chrono::microseconds(waited < 0.01 ? 20 : 500));
  }
}

// Waits, at most `timeout_s`, for the work queued so far on `stream`
// (nullptr: the legacy stream, after every blocking stream's work): wait_for
// on an event recorded there. Throws Failure as wait_for does.
inline void wait_for_stream(cudaStream_t stream, double timeout_s, const std::string& where) {
  cudaEvent_t done = nullptr;
  if (const cudaError_t e = cudaEventCreateWithFlags(&done, cudaEventDisableTiming); e != cudaSuccess)
    throw_cuda(e, "cudaEventCreateWithFlags", where);
  const std::unique_ptr<CUevent_st, cudaError_t (*)(cudaEvent_t)> owned(done, cudaEventDestroy);
  if (const cudaError_t e = cudaEventRecord(done, stream); e != cudaSuccess) throw_cuda(e, "cudaEventRecord", where);
  wait_for(done, timeout_s, where);
}

// After a failed call: whether the context went with it, asked of the
// device (is_sticky) by waiting for all the work queued so far, at most
// `timeout_s` (still running then: lost as well). Never waits for ever,
// unlike is_sticky(cudaDeviceSynchronize()). While this thread's launch
// stream is captured nothing has run to ask about, and a wait would end the
// capture: not lost (the caller's error stands).
inline bool context_lost(double timeout_s = 60) {
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(launch_stream(), &capturing) == cudaSuccess && capturing != cudaStreamCaptureStatusNone)
    return false;
  try {
    wait_for_stream(nullptr, timeout_s, "");
  } catch (const Failure& f) {
    return f.context_lost;
  }
  return false;
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
          wn_cublas_status_ == CUBLAS_STATUS_EXECUTION_FAILED && ::warpnet::device::gpu::context_lost()); \
  } while (0)
