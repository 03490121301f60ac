// Which C tile a block computes. Launching tiles in row-major order makes
// the blocks that run at the same time share one row of A tiles and read
// every column of B; walking GROUP tile rows column by column instead lets
// them share a few A rows and a few B columns, so both stay in L2 (matmul
// v17; v16 has the same walk inside its persistent loop).
#pragma once
#include "kernels/common/cuda_compat.hpp"

namespace warpnet {
inline namespace WARPNET_KERNEL_COPY {

struct TileIndex {
  int m, n;  // tile row and tile column
};

// Tile t (0 <= t < tiles_m * tiles_n): groups of `group` tile rows (the last
// group may be shorter), each walked column by column.
__host__ __device__ constexpr TileIndex grouped_tile(int t, int tiles_m, int tiles_n, int group) {
  const int per_group = group * tiles_n, first_m = t / per_group * group;
  const int rows = tiles_m - first_m < group ? tiles_m - first_m : group, in_group = t % per_group;
  return TileIndex{first_m + in_group % rows, in_group / rows};
}

}  // namespace WARPNET_KERNEL_COPY
}  // namespace warpnet
