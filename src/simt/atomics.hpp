// CUDA atomics for g++. Out of line (atomics.cpp) so that a traced kernel's
// atomic is one checked access, never mistaken for a racing load and store.
// All are relaxed, like CUDA's atomics without a fence.
#pragma once
#include "simt/cuda_types.hpp"

struct __half;
struct __nv_bfloat16;
struct __half2;
struct __nv_bfloat162;

// Each classic atomic in CUDA's three scopes: name (the device), name_block
// (the threads of the calling block only: to the traced build's check
// between blocks, a plain write) and name_system (the device here: no host
// memory is mapped into a kernel).
#define WARPNET_ATOMIC_DECL(name, T) T name(T* address, T value);
#define WARPNET_ATOMIC_SCOPED(name, T) \
  WARPNET_ATOMIC_DECL(name, T) WARPNET_ATOMIC_DECL(name##_block, T) WARPNET_ATOMIC_DECL(name##_system, T)
#define WARPNET_ATOMIC_INTEGERS(name)            \
  WARPNET_ATOMIC_SCOPED(name, int)               \
  WARPNET_ATOMIC_SCOPED(name, unsigned int)      \
  WARPNET_ATOMIC_SCOPED(name, unsigned long long)

WARPNET_ATOMIC_INTEGERS(atomicAdd)
WARPNET_ATOMIC_SCOPED(atomicAdd, float)
WARPNET_ATOMIC_SCOPED(atomicAdd, double)
WARPNET_ATOMIC_SCOPED(atomicSub, int)
WARPNET_ATOMIC_SCOPED(atomicSub, unsigned int)
WARPNET_ATOMIC_INTEGERS(atomicMax)
WARPNET_ATOMIC_SCOPED(atomicMax, long long)
WARPNET_ATOMIC_INTEGERS(atomicMin)
WARPNET_ATOMIC_SCOPED(atomicMin, long long)
WARPNET_ATOMIC_INTEGERS(atomicExch)
WARPNET_ATOMIC_SCOPED(atomicExch, float)
WARPNET_ATOMIC_INTEGERS(atomicAnd)
WARPNET_ATOMIC_INTEGERS(atomicOr)
WARPNET_ATOMIC_INTEGERS(atomicXor)
#undef WARPNET_ATOMIC_INTEGERS
#undef WARPNET_ATOMIC_SCOPED

// Adds of 16-bit floats (sm_70, bf16 sm_80) rounded to nearest even, subnormals
// kept (atom.add.noftz). The pairs, float2 and float4 (sm_90) are updated
// element by element, each element atomic on its own, as the PTX ISA
// promises of the vector forms, not the whole at once.
WARPNET_ATOMIC_DECL(atomicAdd, __half)
WARPNET_ATOMIC_DECL(atomicAdd, __nv_bfloat16)
WARPNET_ATOMIC_DECL(atomicAdd, __half2)
WARPNET_ATOMIC_DECL(atomicAdd, __nv_bfloat162)
WARPNET_ATOMIC_DECL(atomicAdd, float2)
WARPNET_ATOMIC_DECL(atomicAdd, float4)
#undef WARPNET_ATOMIC_DECL

unsigned short int atomicCAS(unsigned short int* address, unsigned short int compare, unsigned short int value);
#define WARPNET_ATOMIC_CAS(T, name) T name(T* address, T compare, T value);
#define WARPNET_ATOMIC_CAS_SCOPED(T) \
  WARPNET_ATOMIC_CAS(T, atomicCAS) WARPNET_ATOMIC_CAS(T, atomicCAS_block) WARPNET_ATOMIC_CAS(T, atomicCAS_system)
WARPNET_ATOMIC_CAS_SCOPED(int)
WARPNET_ATOMIC_CAS_SCOPED(unsigned int)
WARPNET_ATOMIC_CAS_SCOPED(unsigned long long)
#undef WARPNET_ATOMIC_CAS_SCOPED
#undef WARPNET_ATOMIC_CAS

// ((old >= limit) ? 0 : old + 1) and ((old == 0 || old > limit) ? limit : old - 1), as CUDA defines them.
unsigned int atomicInc(unsigned int* address, unsigned int limit);
unsigned int atomicDec(unsigned int* address, unsigned int limit);
unsigned int atomicInc_block(unsigned int* address, unsigned int limit);
unsigned int atomicDec_block(unsigned int* address, unsigned int limit);
unsigned int atomicInc_system(unsigned int* address, unsigned int limit);
unsigned int atomicDec_system(unsigned int* address, unsigned int limit);
