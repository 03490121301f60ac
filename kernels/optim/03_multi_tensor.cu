// Optimizer updates v3 — multi-tensor: a model's parameters in one launch.
//
// Idea: a training step updates every parameter tensor of the model, and
//   LeNet-5 has ten of them, from 6 to 48,000 elements (241 KiB in all).
//   v2 launches once per tensor: ten launches, most a few hundred threads
//   of work, each paying the fixed cost of a launch (and, in a CUDA graph,
//   of a node) for a fraction of a microsecond of memory traffic. Here one
//   launch updates up to kOptimMaxTensors tensors: each tensor is cut into
//   chunks of kOptimChunk elements, a block takes one chunk, and a table
//   passed as the kernel's argument says which tensor each block's chunk
//   belongs to. An argument, not a device buffer: it travels with the launch
//   (no copy from the host, which a queued or captured step may not make),
//   and a graph replays it as captured — the tensors of a step do not move.
//   PyTorch's fused optimizers (multi_tensor_apply) work the same way.
// Changed from v2: the grid is the chunks of all tensors, Σ ceil(n_i/chunk)
//   blocks, not a grid-stride loop over one tensor; block b scans the
//   table's first_block column for its tensor (at most 16 entries, the same
//   answer for every thread of the block: no divergence) and runs v2's loop
//   (sgd_momentum_span, adam_span) over its chunk with the block's threads.
//   A chunk starts at a multiple of 4 elements, so a chunk of an aligned
//   tensor is aligned too, and v2's float4 path applies.
// Measured: not benchmarked alone on a GPU; its launches in LeNet-5's training
//   step on an H200 are profiled in bench/results/logs/ncu-lenet5-nvidia-h200-2026-12-04-run2.csv
//   (Nsight Compute, 2026-12-04). Emulator: `warpnet trace sgd_momentum/03 --size 1031`.
// Run: build/bin/test_simt -tc="registry*,*multi-tensor*"
#include "kernels/optim/02_vectorized.cu"

constexpr int kOptimMaxTensors = 16;  // per launch; more tensors, more launches
constexpr int kOptimChunk = 2048;     // elements per block: two float4s per thread of 256

// The tensors of one launch, passed by value (about 1 KiB of the 4 KiB a
// launch's arguments may hold). Tensor i (i < count) has n[i] elements and
// its chunks are blocks first_block[i] .. first_block[i + 1] − 1.
struct SgdTensors {
  int count;
  int first_block[kOptimMaxTensors + 1];
  int n[kOptimMaxTensors];
  const float* w[kOptimMaxTensors];
  const float* v[kOptimMaxTensors];
  const float* g[kOptimMaxTensors];
  float* w_out[kOptimMaxTensors];
  float* v_out[kOptimMaxTensors];
};
struct AdamTensors {
  int count;
  int first_block[kOptimMaxTensors + 1];
  int n[kOptimMaxTensors];
  const float* w[kOptimMaxTensors];
  const float* m[kOptimMaxTensors];
  const float* v[kOptimMaxTensors];
  const float* g[kOptimMaxTensors];
  float* w_out[kOptimMaxTensors];
  float* m_out[kOptimMaxTensors];
  float* v_out[kOptimMaxTensors];
};

// The tensor whose chunks include block b: the last i with first_block[i] <= b.
template <class Table>
__device__ __forceinline__ int optim_tensor_of(const Table& table, int b) {
  int i = 0;
  while (i + 1 < table.count && table.first_block[i + 1] <= b) ++i;
  return i;
}

// tensors: see SgdTensors; hyper: (3) = {lr, momentum, weight_decay}, one
// for all tensors. Launch: block (BLOCK); grid (tensors.first_block[count]).
template <int BLOCK>
__global__ void sgd_momentum_multi_tensor(SgdTensors tensors, const float* __restrict__ hyper) {
  static_assert(BLOCK % 32 == 0 && kOptimChunk % (4 * BLOCK) == 0, "whole warps, whole float4s per thread");
  warpnet::allow_dependent_grids();  // a programmatic dependent launch may start the next kernel now
  warpnet::wait_for_prior_grids();   // and this one's loads wait for the last kernel's results
  const int i = optim_tensor_of(tensors, blockIdx.x);
  const size_t begin = size_t(blockIdx.x - tensors.first_block[i]) * kOptimChunk;  // of tensor i
  const size_t rest = size_t(tensors.n[i]) - begin, n = rest < kOptimChunk ? rest : kOptimChunk;
  sgd_momentum_span(n, tensors.w[i] + begin, tensors.v[i] + begin, tensors.g[i] + begin, tensors.w_out[i] + begin,
                    tensors.v_out[i] + begin, hyper[0], hyper[1], hyper[2], threadIdx.x, BLOCK);
}

// tensors: see AdamTensors; hyper: (4) = {step_size, beta1, beta2, eps_hat}.
// Launch: as sgd_momentum_multi_tensor.
template <int BLOCK>
__global__ void adam_multi_tensor(AdamTensors tensors, const float* __restrict__ hyper) {
  static_assert(BLOCK % 32 == 0 && kOptimChunk % (4 * BLOCK) == 0, "whole warps, whole float4s per thread");
  warpnet::allow_dependent_grids();  // a programmatic dependent launch may start the next kernel now
  warpnet::wait_for_prior_grids();   // and this one's loads wait for the last kernel's results
  const int i = optim_tensor_of(tensors, blockIdx.x);
  const size_t begin = size_t(blockIdx.x - tensors.first_block[i]) * kOptimChunk;
  const size_t rest = size_t(tensors.n[i]) - begin, n = rest < kOptimChunk ? rest : kOptimChunk;
  adam_span(n, tensors.w[i] + begin, tensors.m[i] + begin, tensors.v[i] + begin, tensors.g[i] + begin,
            tensors.w_out[i] + begin, tensors.m_out[i] + begin, tensors.v_out[i] + begin, hyper[0], hyper[1],
            hyper[2], hyper[3], threadIdx.x, BLOCK);
}
