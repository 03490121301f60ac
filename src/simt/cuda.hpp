// What a kernel .cu file sees when g++ compiles it for the emulator: CUDA's
// qualifiers, types, builtins and runtime API. kernels/common/cuda_compat.hpp
// includes this instead of <cuda_runtime.h> when __CUDACC__ is not defined.
#pragma once
#include <cmath>

#include "simt/atomics.hpp"
#include "simt/cuda_runtime.hpp"
#include "simt/cuda_types.hpp"
#include "simt/device.hpp"
#include "simt/intrinsics.hpp"
#include "simt/launch.hpp"
#include "simt/low_precision.hpp"

// Qualifiers: every function is host code on the CPU.
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
// One copy per OS thread, and each OS thread runs one block at a time: one
// copy per running block, as on the GPU. Like real shared memory, it is not
// reset between blocks.
#define __shared__ static thread_local
// __constant__ data is written by the host before launches and only read by kernels.
#define __constant__
