// Bias backward v3 — each channel's sum split over several blocks, added up
// in a fixed order by a second kernel; a column tile when S = 1.
//
// Idea: v2 gives a channel one block, so the GPU gets C blocks however long
//   the channels are. LeNet-5's conv1 gradient at batch 64 is 6 channels of
//   50,176 terms: 6 blocks on a 132-SM H200, each summing 50k values alone.
//   Here block (c, z) sums slice z of channel c's N·S terms (`slice`
//   consecutive terms, v2's coalesced sweep inside it, v2's block reduction)
//   into partial part[z][c], and sum_splits (kernels/common) adds the
//   partials into db[c] in one fixed order. The registration picks splits
//   so that C·splits is about 264 blocks (two per SM of an H200), but never
//   a slice under 2048 terms, and one split writes db directly (one launch).
//   S = 1 (a linear layer's (N,C) gradient) takes another mapping: the
//   channels are the columns of an (N, C) matrix, so the lanes of a warp
//   take 32 adjacent columns of one row (128 contiguous bytes) and the 8
//   warps of a block take every 8th row of the block's slice of rows; each
//   column's 8 warp sums are added in warp order through shared memory.
// Deterministic on purpose, as conv wgrad v2's split (kernels/conv/wgrad_02):
//   each thread walks its terms in order, the block reduction has a fixed
//   tree and the slices are added in z order, so db is the same sum in the
//   same order on every run. atomicAdd of the partials into db would save
//   the second launch but change db's last bits from run to run.
// Also bias_relu_backward (a ReLU folded into its layer, nn::Sequential::
//   fold_bias_relu): the same sweeps with MASK, each term dY where the
//   ReLU's output is positive, else 0, stored as it is added (bias_term).
// Changed from v2: the reduction split over blocks (a workspace of splits·C
//   floats and a second launch); one barrier, not two (block_allreduce_once:
//   the kernel's only reduction); the term index (n, s) advanced by adding
//   BLOCK = q·S + r instead of a 64-bit division per term; S = 1 read along
//   the rows (coalesced: v2 read each lane's term from its own sector); 8
//   terms a thread loaded before any is added, in the same order
//   (warpnet::sum_in_order: the sums keep their bits).
// Trace (emulator, `warpnet trace`, this 2-core VM, no GPU, 2026-11-30): S = 1
//   at N=64 C=120 (LeNet-5's fc1 gradient, one split): loads 100% efficient,
//   3.75 sectors per request, 32 warps (v2: 12.5%, 32 sectors per request,
//   960 warps); N=8 C=64 S=49: as v2 (73.7%, 5.12 sectors per request).
//   With splits (5,3,1031: two) the trace shows both launches, the sweep and the ordered sum.
//   With MASK (bias_relu_backward, 2026-12-01) at N=64 C=6 S=784 (LeNet-5's
//   conv1 at batch 64): the sweep's loads (y and dY) and stores (dZ) 100%
//   efficient, 4.00 sectors per request each (3.96 over all its stores, the
//   partial sums' included).
// Measured: not yet measured on a GPU; v02 on an NVIDIA H200, 2026-11-30:
//   23.8 us per launch on average over LeNet-5's five bias gradients at
//   batch 64 (Nsight Compute).
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace bias_add_backward/03 --size 64,120,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/in_flight.hpp"
#include "kernels/common/row_reduce.hpp"

// One term of a bias gradient: dY's element, or with MASK (bias_relu_backward)
// the ReLU's backward of it, dY where the ReLU's output y is positive and 0
// elsewhere, also stored to dZ (the gradient the layer before receives). The
// one sweep then does the ReLU's backward and the bias's sum: dY and y read
// once, dZ written once, where two kernels read dY twice.
template <bool MASK>
__device__ __forceinline__ float bias_term(const float* __restrict__ dY, const float* __restrict__ y,
                                           float* __restrict__ dZ, size_t i) {
  if constexpr (!MASK) {
    return dY[i];
  } else {
    const float g = dY[i], term = y[i] <= 0.0f ? 0.0f : g;  // every lane loads: whole sectors, no divergence
    dZ[i] = term;
    return term;
  }
}

// dY: (N,C,S) fp32, S > 1; out: (splits, C) row-major, block (c, z) writes
// out[z][c] = the sum of channel c's terms k in [z·slice, (z+1)·slice) ∩
// [0, N·S), term k being dY[n][c][s] with n = k / S, s = k % S. MASK: y and
// dZ are (N,C,S) too (bias_term); otherwise both null.
// Launch: block (BLOCK); grid (C, splits).
template <int BLOCK, bool MASK = false>
__global__ void __launch_bounds__(BLOCK)
    bias_backward_split_planes(int N, int C, int S, int slice, const float* __restrict__ dY,
                               const float* __restrict__ y, float* __restrict__ dZ, float* __restrict__ out) {
  using warpnet::block_allreduce_once, warpnet::Sum;
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, every lane in the shuffles");
  __shared__ float partials[BLOCK / 32];  // partials: (BLOCK/32) one value per warp
  const int c = blockIdx.x, z = blockIdx.y;
  const int terms = N * S;  // the registration checks it fits an int, with room for k + BLOCK
  const int begin = z * slice, end = begin + min(slice, terms - begin);  // begin < terms: no empty slice
  // Thread t's terms are begin + t, + BLOCK, ...: one division for the first,
  // then a step of BLOCK terms = q whole planes and r more elements.
  const int q = BLOCK / S, r = BLOCK % S;
  int n = (begin + int(threadIdx.x)) / S, s = (begin + int(threadIdx.x)) % S;
  // Its terms, in k order, 8 loads in flight (warpnet::sum_in_order).
  const int first = begin + int(threadIdx.x), count = first < end ? ::warpnet::ceil_div(end - first, BLOCK) : 0;
  float acc = warpnet::sum_in_order(0.0f, count, [&](int) {  // threads with no term keep 0 and still join the shuffles
    const float term = bias_term<MASK>(dY, y, dZ, (size_t(n) * C + c) * S + s);
    n += q, s += r;
    if (s >= S) s -= S, ++n;
    return term;
  });
  acc = block_allreduce_once<Sum, BLOCK>(acc, partials);  // one reduction: no second barrier needed
  if (threadIdx.x == 0) out[size_t(z) * C + c] = acc;
}

// dY: (N,C) fp32 (S = 1); out: (splits, C), block (x, z) writes out[z][c]
// for its 32 columns c = 32·x + lane: the sum of rows [z·slice, (z+1)·slice) ∩ [0, N).
// MASK: y and dZ (N,C), as for the planes.
// Launch: block (BLOCK): 32 lanes along c, BLOCK/32 warps along n; grid (ceil(C/32), splits).
template <int BLOCK, bool MASK = false>
__global__ void __launch_bounds__(BLOCK)
    bias_backward_split_columns(int N, int C, int S, int slice, const float* __restrict__ dY,
                                const float* __restrict__ y, float* __restrict__ dZ, float* __restrict__ out) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps");
  constexpr int WARPS = BLOCK / 32;
  __shared__ float sums[WARPS][32];  // sums[w][lane]: warp w's sum of column 32·x + lane
  (void)S;                           // 1: the kernels share one signature
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int c = blockIdx.x * 32 + lane, z = blockIdx.y;
  const int begin = z * slice, end = begin + min(slice, N - begin);
  // A warp: rows begin + warp, + WARPS, ..., 32 columns each, in row order, 8 loads in flight.
  const int first = begin + warp, rows = c < C && first < end ? ::warpnet::ceil_div(end - first, WARPS) : 0;
  const float acc = warpnet::sum_in_order(
      0.0f, rows, [&](int j) { return bias_term<MASK>(dY, y, dZ, size_t(first + j * WARPS) * C + c); });
  sums[warp][lane] = acc;  // a warp's 32 stores: 32 consecutive words, no bank conflict
  __syncthreads();
  if (warp == 0 && c < C) {
    float total = 0.0f;
    for (int w = 0; w < WARPS; ++w) total += sums[w][lane];  // warp order: the same sum on every run
    out[size_t(z) * C + c] = total;
  }
}
