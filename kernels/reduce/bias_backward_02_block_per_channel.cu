// Bias backward v2 — a block per channel, warp-shuffle block reduction.
//
// Idea: give channel c a block of BLOCK threads instead of one thread. The
//   channel's N·S terms are N planes of S contiguous floats; thread t takes
//   the channel's terms k = t, t + BLOCK, t + 2·BLOCK, ... (term k is element
//   k % S of plane k / S), so at each step the lanes of a warp read 32
//   consecutive terms: within one plane that is 128 contiguous bytes, 4
//   sectors, coalesced. The BLOCK partial sums are combined as in the reduce
//   ladder's v3 (block_allreduce, kernels/common/row_reduce.hpp): five
//   shuffles per warp, one value per warp through shared memory, two barriers.
//   C blocks instead of ceil(C/BLOCK): a conv layer's 64 channels keep 64
//   SMs busy instead of one warp.
// Changed from v1: a block per channel, coalesced along S, a shuffle tree.
// Still poor when S is small. S = 1 (a linear layer): consecutive terms of
//   a channel are whole rows apart (C floats), so each lane's load is its own
//   sector again, 8x the bytes — v1's pattern, which was coalesced there, is
//   the right one for that case. S = 7 or 49 (small feature maps): a warp's
//   32 terms straddle 2 to 5 planes, a few partial sectors per plane. The fix
//   is a column reduction: view dy as an (N, C·S) matrix whose column sums are
//   wanted (then summed over S); a block takes a tile of 32 adjacent columns
//   and a slice of rows, each warp reads along a row (coalesced for any S),
//   each thread sums its column down the slice, and a shared-memory transpose
//   or a second pass (or an atomicAdd per tile) combines the slices. That
//   also fixes v1's and this version's common fault for S = 1 and small C:
//   too few threads, since the rows (N) are split across blocks too.
// Measured: not yet measured on a GPU. Emulator: `warpnet trace bias_add_backward/02 --size 8,64,49`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/row_reduce.hpp"

// dY: (N,C,S) fp32, S = H·W (1 for an (N,C) matrix); db: (C).
// Launch: block (BLOCK); grid (C): block c owns channel c.
template <int BLOCK>
__global__ void bias_backward_block_per_channel(int N, int C, int S, const float* __restrict__ dY,
                                                float* __restrict__ db) {
  using warpnet::block_allreduce, warpnet::Sum;
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, every lane in the shuffles");
  __shared__ float partials[BLOCK / 32];  // partials: (BLOCK/32) one value per warp
  const int c = blockIdx.x;
  const size_t terms = size_t(N) * S;  // the channel's N·S terms
  // Threads past the last term keep 0 and still take part in the reduction:
  // its shuffles name the whole warp and its barriers the whole block.
  float acc = 0.0f;
  for (size_t k = threadIdx.x; k < terms; k += BLOCK) {
    const size_t n = k / S, s = k % S;
    acc += dY[(n * C + c) * S + s];
  }
  acc = block_allreduce<Sum, BLOCK>(acc, partials);
  if (threadIdx.x == 0) db[c] = acc;
}
