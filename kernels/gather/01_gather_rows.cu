// Gather v1 — rows of a table picked by an index list: how a training batch
// is made on the device from a data set that lives there.
//
// Idea: out[i, :] = table[indices[i], :]. A shuffled batch is the data set's
//   rows in the order of a random permutation; made on the host, it is a
//   gather there (B·W words copied row by row) and then a copy of the whole
//   batch over PCIe, every step, while the GPU waits. With the data set
//   uploaded once (60,000 Fashion-MNIST images are 188 MB, a sliver of an
//   H200's 141 GB), a step uploads only its B indices (4 bytes each) and this
//   kernel makes the batch at device bandwidth. It copies 4-byte words, not
//   floats: the same launch gathers the fp32 images and the int32 labels,
//   bit for bit. The copy is the elementwise family's grid-stride loop
//   (kernels/elementwise/01_grid_stride.cu) over the B·W output words; the W
//   lanes that share an output row read one table row, so both the loads
//   and the stores are consecutive words (coalesced) except where a warp
//   crosses from one row to the next.
// Out-of-range indices: the kernel reads no table row it was not given (an
//   index outside [0, table_rows) writes zeros), and the host, which drew the
//   indices, checks them before they are uploaded (device::gather_rows).
// Changed: first version.
// Measured: not yet measured on a GPU. Emulator: `warpnet trace gather_rows/01 --size 33,784,100`.
// Run: build/bin/test_simt -tc="registry*"
#include <cstdint>

#include "kernels/common/cuda_compat.hpp"

// table: (table_rows, width) 4-byte words; indices: (rows) int32;
// out: (rows, width). Launch: block (BLOCK); any grid: the loop covers every
// word. A training step's first kernel: launch_dependent_kernel (cuda_compat.hpp).
template <int BLOCK>
__global__ void gather_rows_grid_stride(int rows, int width, int table_rows, const uint32_t* __restrict__ table,
                                        const int32_t* __restrict__ indices, uint32_t* __restrict__ out) {
  static_assert(BLOCK % 32 == 0, "whole warps");
  warpnet::allow_dependent_grids();  // a programmatic dependent launch may start the next kernel now
  warpnet::wait_for_prior_grids();   // and this one's loads wait for the last kernel's results
  const size_t n = size_t(rows) * width, stride = size_t(gridDim.x) * BLOCK;
  for (size_t i = size_t(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += stride) {
    const int row = indices[i / width];  // one division per word; the W lanes of a row read the same index
    out[i] = row >= 0 && row < table_rows ? table[size_t(row) * width + i % width] : 0u;
  }
}
