// Conv v12 — Winograd F(4x4, 3x3): a 4x4 block of y per transformed tile,
// so 2.25 products per output and channel where F(2x2, 3x3) needs 4, and
// workspaces 2.25x x's and y's sizes where F(2x2)'s are 4x; v11's candidates
// remain.
//
// Idea: v10's method (its header) with a 6x6 window of x per 4x4 block of
//   y: 36 products where the definition takes 144 (F(2x2): 16 for 36). The
//   matrices (Lavin and Gray, 2015, the points 0, ±1, ±2, ∞):
//     Bᵀ = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0;
//           0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
//     G  = [¼ 0 0; -⅙ -⅙ -⅙; -⅙ ⅙ -⅙; 1/24 1/12 ⅙; 1/24 -1/12 ⅙; 0 0 1]
//     Aᵀ = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
//   Summed over input channels, each of the 36 positions ξ is its own
//   matrix product, M[ξ] (K, T) = U[ξ] (K, C) @ V[ξ] (C, T), now with T =
//   N·⌈P/4⌉·⌈Q/4⌉ tiles: 36 GEMMs of a quarter of v10's columns, 1.78x
//   fewer multiply-adds in all where P and Q are multiples of 4, in one
//   launch (ξ = blockIdx.z) at v10's two GEMM tiles. V and M hold 36 floats
//   per tile and channel for 16 outputs of a plane, against v10's 16 per 4:
//   the workspace traffic that held v10 back at 64 channels (issue 5's 56x56
//   layer) shrinks about as much (1.72x by the registry's byte count there).
// Chunks: V is written by one launch and read by the next, M likewise; at
//   issue 5's 56x56 layer each is 115 MB, twice the H200's 60 MiB L2, so
//   both make the round trip to DRAM. Two more candidates run the input
//   transform, GEMMs and output transform per chunk of the batch whose V and
//   M fit in 24 MiB (6 images there), so they can stay in L2, for three
//   launches per chunk instead of three in all; the workspace shrinks with
//   them (22 MB against 231 MB there). Which wins is the tuner's to measure.
// The price: accuracy. The transforms' entries reach 5 (Bᵀ), 8 (Aᵀ) and ⅙
//   (G, not a float), so an output sums its products with larger weights
//   through more roundings: the bound derived for this arithmetic
//   (src/device/kernels/conv/winograd_bound.hpp: C + 18 roundings over the
//   transforms' products weighted by |Aᵀ|, |G| and |Bᵀ|) is 13x F(2x2,
//   3x3)'s at 32 channels, 10x at 128 (summed over a layer). F(6x6, 3x3)
//   would save more multiplications and lose more accuracy.
// Applies: 3x3 filters, stride 1, dilation 1, any padding (the chunked
//   candidates where the batch makes two chunks or more). Elsewhere v11's
//   candidates, after the four F(4x4) ones; on a GPU Kernel::tune times
//   every candidate that applies.
// The table's rule (no GPU): F(4x4) where v10's table takes Winograd (C and
//   K at least 16) and its GEMMs multiply less than F(2x2)'s (36·⌈P/4⌉·⌈Q/4⌉
//   against 16·⌈P/2⌉·⌈Q/2⌉ per image and channel pair; not at 1, 2, 5 or 6
//   outputs a side, where the cut tiles cost what F(4x4) saves), at v10's
//   GEMM tile for K, over the whole batch; else v11's table.
// Changed from v10: 6x6 windows at a stride of 4, 36 GEMMs, 4x4 output
//   blocks stored as float4 rows where Q is a multiple of 4 (float2 pairs
//   where it is even), candidates in L2-sized chunks of the batch. The
//   kernels, their launch and the chunks are in kernels/conv/winograd_4x4.hpp
//   (shared with dgrad v8), the tiles and windows in winograd.hpp, the GEMMs
//   in winograd_gemms.hpp (shared with v10).
// Trace (emulator, `warpnet trace conv2d/12 --size 2,32,14,14,64,3,3,1,1,1`,
//   lesson 05's layer, and conv2d/10): global bytes asked 1.75e6 against
//   1.83e6 (at N = 2 the 32 tiles are few and U, 36·K·C, is the largest
//   array; at issue 5's N = 64 layers the registry's formula gives 688 /
//   377 / 327 MB against v10's 1182 / 644 / 433); the worst element 0.22%
//   of its bound away (v10: 0.53% of a bound 13x smaller); the GEMMs'
//   loads and stores 100% efficient; the input transform's loads 20.8%
//   (6x6 windows 4 apart: cache hits on a GPU), the output transform's
//   float2 stores 39.7% (Q = 14: a row's two pairs are two stores, each
//   filling at most half of the sectors it touches; float4 rows where Q is
//   a multiple of 4, as at 56x56 and 28x28).
// Measured: not yet on a GPU.
// Run: build/bin/test_simt -tc="conv winograd 4x4*"; build/bin/warpnet trace conv2d/12 --size 2,32,28,28,64,3,3,1,1,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/11_winograd_fused.cu"  // v11's candidates (it includes v10, v9, v8 and v7)
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/winograd.hpp"      // tiles
#include "kernels/conv/winograd_4x4.hpp"  // the F(4x4, 3x3) kernels and their launch, shared with dgrad v8

namespace conv_v12 {

// The four F(4x4) candidates (v10's GEMM tiles, over the whole batch and in
// L2-sized chunks: winograd_4x4.hpp), then v11's (its fused kernel, v10's,
// v9's ...).
constexpr int kWinograd = winograd::f4x4::kCandidates;
constexpr int kCandidates = kWinograd + conv_v11::kCandidates;

inline const char* candidate_name(int i) {
  return i < kWinograd ? winograd::f4x4::candidate_name(i) : conv_v11::candidate_name(i - kWinograd);
}

// Whether candidate i can run this problem (a chunked one only where the
// batch makes two chunks or more: elsewhere it is the whole-batch one).
inline bool candidate_applies(int i, const ConvShape& g) {
  if (i < kWinograd) return winograd::applies(g) && winograd::f4x4::candidate_differs(i, g);
  return conv_v11::candidate_applies(i - kWinograd, g);
}

// The tuning table: F(4x4) over the whole batch where v10's table takes
// Winograd and F(4x4) multiplies less, at v10's GEMM tile (the candidates'
// order is v10's); else v11's table.
inline int table_choice(const ConvShape& g) {
  const int v10 = conv_v10::table_choice(g);
  if (v10 < conv_v10::kWinograd && winograd::f4x4::fewer_products_than_2x2(g)) return v10;
  return kWinograd + conv_v11::table_choice(g);
}

}  // namespace conv_v12
