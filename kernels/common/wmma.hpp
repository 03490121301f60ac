// nvcuda::wmma on both compilers: CUDA's <mma.h> under nvcc, the emulator's
// (src/simt/wmma.hpp: fp16/bf16 m16n16k16, fp32 accumulator) under g++.
#pragma once
#include "kernels/common/cuda_compat.hpp"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#else
#include "simt/wmma.hpp"
#endif
