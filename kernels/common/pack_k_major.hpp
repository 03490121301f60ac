// Packs a byte matrix K-major (K contiguous) with its rows padded: what an
// fp8 tensor-core operand needs when it is stored the other way round, or
// when its row pitch is no multiple of 16 bytes (TMA's rule). 8-bit wgmma and
// mma operands have no transpose, so matmul/15 runs this first on such an
// operand, into a device workspace, and multiplies the packed copy.
#pragma once
#include <cstdint>

#include "kernels/common/cuda_compat.hpp"

namespace warpnet {
inline namespace WARPNET_KERNEL_COPY {

// src: the (rows, K) matrix, stored (rows, K) row-major, or (K, rows) when
//   Transposed; dst: (padded_rows, pitch) row-major bytes, padded_rows >=
//   rows, pitch >= K, zeros past (rows, K) (zeros add nothing to a dot
//   product; cuBLASLt's fp8 wants M, N and K padded, TMA only K's pitch).
// A block moves one 32x32 tile through shared memory, so that its reads and
// its writes both run along rows of their own matrix, coalesced either way.
// Launch: block (32, 8); grid (ceil(pitch/32), ceil(padded_rows/32)).
template <bool Transposed>
__global__ void __launch_bounds__(256) pack_k_major(int rows, int K, int padded_rows, int pitch,
                                                    const uint8_t* __restrict__ src, uint8_t* __restrict__ dst) {
  // tile: (32 r, 32 k); the pad byte per row puts a column's 32 bytes 33 apart, in 32 different 4-byte banks.
  __shared__ uint8_t tile[32][33];
  const int r0 = blockIdx.y * 32, k0 = blockIdx.x * 32, x = threadIdx.x;
  for (int y = threadIdx.y; y < 32; y += blockDim.y) {
    // Consecutive x: consecutive bytes of one stored row (r when Transposed, else k).
    const int r = r0 + (Transposed ? x : y), k = k0 + (Transposed ? y : x);
    const bool inside = r < rows && k < K;
    if (Transposed)
      tile[x][y] = inside ? src[size_t(k) * rows + r] : 0;
    else
      tile[y][x] = inside ? src[size_t(r) * K + k] : 0;
  }
  __syncthreads();
  for (int y = threadIdx.y; y < 32; y += blockDim.y) {
    const int r = r0 + y, k = k0 + x;
    if (r < padded_rows && k < pitch) dst[size_t(r) * pitch + k] = tile[y][x];
  }
}

}  // namespace WARPNET_KERNEL_COPY
}  // namespace warpnet
