// Peak v8 — peak v7's ring refilled by cp.async as matmul v17 refills it:
// v17's main loop whole, with operands that never leave L2.
//
// Idea: v7 walks v17's ring of stages with v17's barrier; this version also
//   refills a stage every k-step, three k-steps ahead, with v17's count of
//   16-byte cp.async copies (6 a thread) and its wait_group<2> before the
//   barrier. The copies read the same 12 KiB of A and B every time, so they
//   come from L2, every block's from the same lines: what is left between v8
//   and v17 is what DRAM, L2 misses, v17's edge guards and its epilogue cost.
// Changed from v7: stage (step + 3) % 4 is refilled after every barrier, and
//   each k-step waits for its own copies first.
// Measured: not yet measured on a GPU.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace peak/08 --size 2,3
#include "kernels/common/mma_store.hpp"
#include "kernels/peak/mma_sync_ring.hpp"

// A: (128,16) row-major bf16; B: (16,256) row-major bf16; C: (gridDim.x,128,256)
// fp32, C[b] = repeats * (A @ B), a repeat being one k16 slice. Launch: block
// (256) = 8 warps, grid (blocks); dynamic shared peak_ring::kSharedBytes.
__global__ void __launch_bounds__(peak_ring::THREADS, 1)
    peak_mma_sync_cp_async(int repeats, const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                           float* __restrict__ C) {
  using namespace peak_ring;
  T* sa = warpnet::dynamic_shared<T>();  // stage s: A at sa + s·A_ELEMS, B at sb + s·B_ELEMS
  T* sb = sa + STAGES * A_ELEMS;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wm0 = (warp / (TN / WN)) * peak_mma_sync::WM, wn0 = (warp % (TN / WN)) * WN;
  float acc[peak_mma_sync::MI][WN / 8][4] = {};
  const int steps = repeats / 2;  // whole k-steps; an odd repeat is one slice more
  for (int s = 0; s < STAGES - 1; ++s) copy_stage(sa + s * A_ELEMS, sb + s * B_ELEMS, A, B);
  for (int step = 0; step < steps; ++step) {
    // As in v17: STAGES-1+step groups are committed and step's is the oldest
    // not yet waited for; the barrier then publishes everyone's copies into
    // this step's stage and frees step-1's, refilled on the next line. The
    // operands never change, so the refill is unconditional: the last
    // k-steps copy stages no step reads, where v17 commits empty groups.
    warpnet::ptx::cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int refill = (step + STAGES - 1) % STAGES;
    copy_stage(sa + refill * A_ELEMS, sb + refill * B_ELEMS, A, B);
    const int s = step % STAGES;
#pragma unroll
    for (int slice = 0; slice < 2; ++slice)
      multiply_slice(acc, sa + s * A_ELEMS, sb + s * B_ELEMS, slice, wm0, wn0, lane);
  }
  if (repeats % 2 != 0) {  // stage steps % 4 was refilled three k-steps ago (or by the prologue)
    warpnet::ptx::cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int s = steps % STAGES;
    multiply_slice(acc, sa + s * A_ELEMS, sb + s * B_ELEMS, 0, wm0, wn0, lane);
  }
  warpnet::ptx::cp_async_wait<0>();  // no copy left landing in shared memory at exit
  warpnet::store_mma_fragments(acc, C + size_t(blockIdx.x) * TM * TN, TM, TN, wm0, wn0, lane);
}
