// The GEMMs of the non-fused Winograd versions (conv v10 and v12, dgrad v6
// and v8): for each position ξ of the transformed tile, M[ξ] (K, T) = U[ξ]
// (K, C) @ V[ξ] (C, T), all of them in one launch of matmul v9's batched
// kernel (ξ = blockIdx.z: one GEMM alone may not fill the GPU), at one of
// two block tiles.
#pragma once
#include <cstddef>

#include "kernels/common/cuda_compat.hpp"
// matmul v9's sgemm_warptiling_batched: pipelined_gemm.hpp includes
// kernels/matmul/09_warptiling.cu once for every conv kernel file.
#include "kernels/conv/pipelined_gemm.hpp"

namespace winograd {

// The GEMMs' tiles: matmul v9's 128x128 in 8 warps, and 64x128 in 4 warps
// of 32x64 for K <= 64 (rows are output channels, columns tiles).
template <int BM_, int BN_, int WM, int WN, int THREADS>
struct GemmTile {
  static constexpr int BM = BM_, BN = BN_, threads = THREADS;
  static auto kernel() { return sgemm_warptiling_batched<BM, BN, 16, WM, WN, 2, 2, 4, 4, false, false>; }
};
using Gemm0 = GemmTile<128, 128, 64, 32, 256>;
using Gemm1 = GemmTile<64, 128, 32, 64, 128>;
constexpr int kGemmTiles = 2;

// visit.template operator()<T>() for GEMM tile i (0 <= i < kGemmTiles).
template <class Visit>
auto with_gemm_tile(int i, Visit&& visit) {
  if (i == 0) return visit.template operator()<Gemm0>();
  return visit.template operator()<Gemm1>();
}

// The grid of `xis` GEMMs M[ξ] (K, T) = U[ξ] (K, C) @ V[ξ] (C, T) at GEMM tile i, ξ = blockIdx.z.
inline dim3 gemm_grid(int i, int K, int T, int xis) {
  return with_gemm_tile(i, [&]<class Tile>() {
    return dim3(::warpnet::ceil_div(T, Tile::BN), ::warpnet::ceil_div(K, Tile::BM), xis);
  });
}

// The `xis` GEMMs at GEMM tile i, in one launch on the current stream
// (v10's 16, v12's 36): U (xis, K, C), V (xis, C, T), M (xis, K, T).
inline void launch_gemms(int i, int K, int T, int C, int xis, const float* U, const float* V, float* M) {
  with_gemm_tile(i, [&]<class Tile>() {
    ::warpnet::launch_kernel(Tile::kernel(), gemm_grid(i, K, T, xis), dim3(Tile::threads), 0, K, T, C, U,
                             size_t(K) * C, V, size_t(C) * T, M, size_t(K) * T);
  });
}

}  // namespace winograd
