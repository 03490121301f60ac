// Softmax + cross-entropy backward v1 — a grid-stride loop over dlogits.
//
// Idea: the gradient of the batch-mean loss with respect to the logits needs
//   no exp, no log and no reduction: the forward kept P, and
//     dZ[i][j] = (dloss / N) · (P[i][j] − [j == label_i]),
//   one fused elementwise pass (read P, write dZ: 8 bytes per element). The
//   loop is elementwise/01's: thread t takes elements t, t + gridDim·blockDim,
//   ..., so a warp reads and writes 32 consecutive floats per step. The
//   label of element i is labels[i / C]: the lanes of a warp share one or
//   two rows, so those loads hit the cache.
//   dloss, the upstream gradient of the mean loss (1 for a plain loss, a
//   scale factor under loss scaling), is a device scalar and not a kernel
//   argument: a captured CUDA graph replays the same launch whatever it is.
//   The scale is applied once to the difference, not as scale·P − scale:
//   that form cancels where P ≈ 1 and loses the small difference's bits.
// Changed: first version.
// Precondition: labels in [0, C). A label outside it makes its row's dZ NaN,
//   as the forward makes its loss NaN: a captured step applies its update
//   before the host reads the loss, so the bad row poisons the weights
//   visibly rather than training on a row with no target.
// Measured: not benchmarked alone on a GPU; its launches in LeNet-5's training
//   step on an H200 are profiled in bench/results/logs/ncu-lenet5-nvidia-h200-2026-12-04-run2.csv
//   (Nsight Compute, 2026-12-04). Emulator: `warpnet trace softmax_cross_entropy_backward/01 --size 17,1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"

// P: (N,C) row-major probabilities from the forward; labels: (N) i32;
// dloss: (1) the upstream gradient of the mean loss; dZ: (N,C) row-major.
// Launch: block (BLOCK); any grid: the loop covers every element.
template <int BLOCK>
__global__ void softmax_cross_entropy_backward_grid_stride(int N, int C, const float* __restrict__ P,
                                                           const int* __restrict__ labels,
                                                           const float* __restrict__ dloss, float* __restrict__ dZ) {
  static_assert(BLOCK % 32 == 0, "whole warps");
  const float scale = dloss[0] / float(N);  // one broadcast load per thread
  // size_t: i + stride may pass INT_MAX when N·C is near it.
  const size_t n = size_t(N) * C, stride = size_t(gridDim.x) * BLOCK;
  for (size_t i = size_t(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += stride) {
    const size_t row = i / C, col = i % C;
    const int label = labels[row];
    const float onehot = int(col) == label ? 1.0f : 0.0f;
    dZ[i] = label >= 0 && label < C ? scale * (P[i] - onehot) : NAN;
  }
}
