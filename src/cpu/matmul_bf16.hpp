// matmul with bf16 inputs on the CPU's own bf16 dot-product instruction
// (AVX512_BF16's vdpbf16ps, Cooper Lake and later, Zen 4): each lane of a
// 512-bit register adds two bf16 x bf16 products to an fp32 sum. A bf16
// holds 8 significant bits, so a product has at most 16 and is exact in
// fp32; only the fp32 additions round, as on a tensor core with fp32
// accumulation. The instruction flushes subnormal inputs and results to
// zero (Intel SDM, VDPBF16PS: DAZ, FTZ, round to nearest even).
//
// Chosen at run time: the code is compiled with a function-level target
// attribute, so the library runs on any x86-64 and this path is taken only
// where has_avx512_bf16() says the CPU has it. Elsewhere (and on other
// architectures) callers use Eigen's fp32 GEMM on the same bf16 values,
// which computes the same exact products (device/precision_matmul.hpp).
//
// Register blocking only (4 x 4 elements of C), no cache blocking: on the
// 2-core VM (2026-11-30, a loaded machine) it took 54 ms for 1024^3 against
// 35 ms for Eigen's fp32 GEMM on the same values (`warpnet bench precision`,
// bench/results/cpu-precision-vm-2026-11-30.json). It is here for the
// instruction's arithmetic, not yet for speed.
#pragma once
#include "core/tensor.hpp"

namespace warpnet::cpu {

// Whether this CPU (and build: x86-64 with GCC or Clang) runs matmul_bf16.
bool has_avx512_bf16();

// C = A·B. a: (M,K), b: (K,N), f32 tensors whose every value is a bf16
// (the low 16 bits of each fp32 are zero; throws naming the first element
// that is not). Returns C: (M,N) f32. Throws when has_avx512_bf16() is false.
// Packs A and B^T to bf16 first (K padded with zeros to a multiple of 32),
// then K/32 vdpbf16ps per element, in 4 x 4 blocks of C, and the 16 lanes
// of each element's register added pairwise.
Tensor matmul_bf16(const Tensor& a, const Tensor& b);

}  // namespace warpnet::cpu
