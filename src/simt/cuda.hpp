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
#include "simt/tensor_map.hpp"

// Qualifiers: every function is host code on the CPU. With the toolkit, CUDA's
// host_defines.h (through vector_types.h) has defined them already, for nvcc.
#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __noinline__
#undef __launch_bounds__
#undef __align__
#undef __shared__
#undef __constant__
#undef __grid_constant__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
// A GNU attribute: CUDA writes it among the decl-specifiers (`__shared__ __align__(16) float s[]`), where alignas may not stand.
#define __align__(n) __attribute__((aligned(n)))
// One copy per OS thread, and each OS thread runs one block at a time: one
// copy per running block, as on the GPU. Like real shared memory, it is not
// reset between blocks.
#define __shared__ static thread_local
// __constant__ data is written by the host before launches and only read by kernels.
#define __constant__
// A kernel parameter the kernel never writes, addressable (a CUtensorMap for TMA): an ordinary parameter here.
#define __grid_constant__
