// Conv v11 — Winograd F(2x2, 3x3) fused: the input transform, the 16
// products and the output transform in one kernel, so the transformed
// tiles never leave the SM; v10's candidates remain.
//
// Idea: v10 writes V (16 floats per tile and input channel) and M (16 per
//   tile and output channel) to global memory and reads them back: about 4x
//   x's and 4x y's bytes, twice each, around GEMMs that must then be
//   compute-bound to pay for them. Here a block owns 32 output channels x 32
//   tiles, all 16 positions ξ of them, and walks the input channels in chunks
//   of 8. Per chunk each of its 256 threads loads one 4x4 window of x (one
//   channel, one tile), transforms it (Bᵀ d B) into shared memory, and the
//   block stages the chunk's transformed filters U (winograd.hpp's filter
//   transform, v10's, run once before, 16·K·C floats); then each thread multiplies for one ξ an
//   8x8 piece of the (channels x tiles) product, M[ξ] += U[ξ]ᵀ V[ξ] over the 8
//   channels, from float4 reads of both. After the last chunk the 16 ξ of a
//   (channel, tile) are spread over 16 threads: they meet in shared memory,
//   half the channels at a time, and each thread transforms two tiles back
//   (Aᵀ m A) and stores them. Global traffic: x (its windows' overlap from
//   cache) once per block over a tile, U once per block over a channel, y
//   once. The kernel is winograd_fused.hpp's, shared with dgrad v7.
// Shared memory: Us[16][8][36] and Vs[16][8][36] (36 KiB; rows padded so the
//   transposing stores of U and the float4 reads hit distinct banks), reused
//   as Ms[16][16][36] for the output: exactly the same 9216 floats.
// Registers: 64 accumulators (an 8x8 piece) per thread; ptxas: 128 with
//   __launch_bounds__(256, 2) (two blocks per SM), 28 bytes spilled (144
//   without the bound, one block per SM). U's copies are cp.async, so a
//   thread holds no staged values, and its window's 16 bounds tests are one
//   mask made once (winograd.hpp's window_mask).
// Applies: where v10's Winograd does (3x3, stride 1, dilation 1). Elsewhere
//   v10's candidates, after this kernel; on a GPU Kernel::tune times every
//   candidate that applies.
// The table's rule (no GPU): this kernel where v10's table takes Winograd (C
//   and K at least 16); else v10's table.
// Changed from v10: one kernel for v10's input transform, 16 GEMMs and output
//   transform (its filter transform stays a launch of its own); the products
//   from shared memory at 32x32 per block instead of matmul v9's tiles.
// Trace (emulator, `warpnet trace conv2d/11 --size 2,32,28,28,64,3,3,1,1,1`
//   and conv2d/10, where v10's table takes its 64x128 GEMM tile): global
//   bytes asked 3.80e6 against 6.69e6 (the registry's formulas 3.92e6 and
//   6.75e6); U's cp.async copies 4 sectors a request, the windows' loads
//   9.1 (their overlap, cache hits on a GPU); the float4 reads of Us and Vs
//   free of bank conflicts, the transposing copies of U too; the pieces'
//   float4 stores into Ms 2-way (6,656 of 33,280 shared stores); y's float2
//   stores 83.4% efficient.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-cnn.json, `warpnet bench conv2d`),
//   N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14: 0.368 / 0.283 / 0.265 ms,
//   40.2 / 52.3 / 55.9 TFLOP/s, 61.8% / 68.9% / 91.2% of cuDNN (fp32, no TF32) in the same run: the
//   tuner picked v10's Winograd GEMM 64x128 / 128x128 / 64x128 each time; the fused kernel took
//   0.406 / 0.379 / 0.364 ms in the tune.
// Run: build/bin/test_simt -tc="conv winograd fused*"; build/bin/warpnet trace conv2d/11 --size 2,32,28,28,64,3,3,1,1,1
#include "kernels/conv/10_winograd.cu"  // v10's candidates (it includes v9, v8, v7)
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/winograd.hpp"
#include "kernels/conv/winograd_fused.hpp"  // the fused kernel, shared with dgrad v7

namespace conv_v11 {

// The fused kernel, then v10's candidates (its two Winograd GEMM tiles, v9's).
constexpr int kFused = 1;
constexpr int kCandidates = kFused + conv_v10::kCandidates;

inline const char* candidate_name(int i) {
  return i < kFused ? winograd::fused::kName : conv_v10::candidate_name(i - kFused);
}

// Whether candidate i can run this problem.
inline bool candidate_applies(int i, const ConvShape& g) {
  return i < kFused ? winograd::applies(g) : conv_v10::candidate_applies(i - kFused, g);
}

// The tuning table: the fused kernel where v10's table takes Winograd; else v10's table.
inline int table_choice(const ConvShape& g) {
  const int v10 = conv_v10::table_choice(g);
  return v10 < conv_v10::kWinograd ? 0 : kFused + v10;
}

}  // namespace conv_v11
