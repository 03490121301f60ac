// What every peak version computes, and the one tile they share.
//
// Each block multiplies one 128x16 tile of A by one 16x256 tile of B,
// `repeats` times over, into the same 128x256 accumulators: C_b = repeats *
// (A @ B) for block b. The operands are read from global memory once, before
// the loop; inside it a version touches only registers and shared memory.
// So the time of a launch is the time of the instructions a GEMM's inner loop
// is made of, with nothing else in the way: the ceiling of that loop, set
// beside what the matmul ladder's kernels reach (lessons/04-matmul-ladder).
// 256 or 512 threads own the 128x256 tile as the GEMMs own theirs (128 or 64
// fp32 accumulators a thread, in the GEMMs' thread and warp tiles), so the
// ceiling is the one of the registers and warps the GEMMs really have.
#pragma once
#include "kernels/common/cuda_compat.hpp"

namespace peak_tile {

constexpr int TM = 128, TN = 256, TK = 16;  // a block's C tile, and the k of one repeat

// A compiler barrier: shared memory may have changed, so loads inside a
// repeat are issued again in every repeat rather than hoisted out of the loop
// (LLVM would hoist them however many registers that takes). No instruction.
__device__ __forceinline__ void reload_from_shared() { asm volatile("" ::: "memory"); }

}  // namespace peak_tile
