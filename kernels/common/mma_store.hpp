// The epilogue of the mma.sync GEMMs (matmul v12, v14, v17): a warp's grid of
// m16 x n8 fp32 accumulator fragments stored to C, guarded at every edge.
#pragma once
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"

namespace warpnet {
inline namespace WARPNET_KERNEL_COPY {

// acc[i][j]: the C fragment of rows row0+16i.., columns col0+8j.., as
// mma.sync m16n8 leaves it in lane `lane`: c0,c1 at (groupID,
// 2*threadID_in_group + 0/1), c2,c3 eight rows lower. C: (M,N) row-major fp32.
template <int MI, int NI>
__device__ __forceinline__ void store_mma_fragments(const float (&acc)[MI][NI][4], float* C, int M, int N, int row0,
                                                    int col0, int lane) {
  const int group = lane / 4, in_group = lane % 4;
  const bool pairs = float2_rows(C, N);
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = row0 + 16 * i + group + 8 * h, c = col0 + 8 * j + 2 * in_group;
        if (r >= M) continue;
        float* out = C + size_t(r) * N + c;
        if (pairs && c + 1 < N) {  // c even: an 8-byte aligned pair
          store_float2(out, acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        } else {
          if (c < N) out[0] = acc[i][j][2 * h];
          if (c + 1 < N) out[1] = acc[i][j][2 * h + 1];
        }
      }
}

}  // namespace WARPNET_KERNEL_COPY
}  // namespace warpnet
